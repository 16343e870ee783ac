# The verifier service, `timeaware serve`, as a static binary on distroless.
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t timeaware:dev .
#   docker run --rm -p 8080:8080 -e TIMEAWARE_SERVE_TOKEN=... -e TIMEAWARE_TIMERS_SECRET=... timeaware:dev
#
# Listening beyond loopback (0.0.0.0, as CMD does) needs serve.token
# (TIMEAWARE_SERVE_TOKEN): without it the server exits 2 at start, unless
# --allow-no-token is passed. Replicas share timers only when each gets the same
# timers.secret (TIMEAWARE_TIMERS_SECRET, at least 16 bytes). deploy/kubernetes/
# passes both from a Secret; see deploy/README.md.

# Base images by tag and digest: the digest (of the multi-platform index) is
# what the build pulls, so a tag pushed again cannot change the image; the tag
# says what it is. To move to a new release, change both: the digest of a tag
# is what `docker buildx imagetools inspect IMAGE:TAG` prints as Digest, and
# bash deploy/image-smoke.sh builds and runs the result.
#
# The Go toolchain of go.mod (go 1.26), pinned to a patch release.
FROM golang:1.26.8-bookworm@sha256:a688600ca24f8a4d3ca77f95b0dd40704a9fc787c826660eb7ba0b641b8b175d AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download && go mod verify
COPY . .
ARG VERSION=0.1.0-dev
# Static (no cgo, so no libc is needed at run time), no build paths in the
# binary, no symbol tables; .git is not in the context (.dockerignore), so
# the version comes from VERSION alone.
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -buildvcs=false \
        -ldflags "-s -w -X main.version=${VERSION}" \
        -o /out/timeaware ./cmd/timeaware

# distroless/static: CA certificates, tzdata and /etc/passwd, no shell, no
# package manager. :nonroot is uid/gid 65532; USER repeats it as numbers so
# that Kubernetes' runAsNonRoot can check it without /etc/passwd.
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
ARG VERSION=0.1.0-dev
LABEL org.opencontainers.image.title="timeaware" \
      org.opencontainers.image.description="timeaware serve: the verifier service (rewards, timers, get_duration)" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /out/timeaware /timeaware
USER 65532:65532
EXPOSE 8080
# No HEALTHCHECK: the image has no shell or HTTP client, and timeaware has no
# subcommand that probes a URL. Orchestrators check the service over HTTP:
# GET /healthz (liveness) and GET /readyz (readiness, 503 from SIGTERM on);
# deploy/kubernetes/deployment.yaml wires both as probes.
HEALTHCHECK NONE
# Exec form: timeaware is PID 1 and receives SIGTERM itself (it fails
# /readyz, keeps serving for serve.shutdown_grace, then drains).
ENTRYPOINT ["/timeaware"]
CMD ["serve", "--addr", "0.0.0.0:8080"]
