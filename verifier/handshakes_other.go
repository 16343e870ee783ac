//go:build !linux

package verifier

import (
	"errors"
	"net"
)

// refuseHandshakes is Linux only (see handshakes_linux.go); elsewhere the
// drain relies on the quiet period alone.
func refuseHandshakes(net.Listener) error { return errors.ErrUnsupported }
