// Package output writes what a command makes: dataset files that appear
// whole or not at all ([File], over package atomicfile), filled in record
// batches through a format's writer ([Sink]), hashed and counted for the
// [Manifest] written beside them, and put in place together with it
// ([Commit]). It also reads the inputs a manifest records ([Input]) and
// reads manifests back, checking that their outputs are unchanged
// ([ReadManifest]).
package output
