package verifier

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// refuseHandshakes makes the kernel drop the connection requests (TCP
// segments with SYN and without ACK) that reach ln from now on, while
// handshakes already under way complete and wait to be accepted.
//
// A listening socket that is closed resets every connection still waiting
// in its accept queue, and their clients have already sent their requests.
// With new handshakes dropped, the queue empties as the server accepts, and
// closing the listener then resets nothing. A client whose SYN was dropped
// sends it again a second later; by then the listener is closed and the
// client is refused before it has sent anything, so it may go elsewhere.
//
// The filter is a classic BPF program on the socket: the kernel runs a
// listening socket's filter on every segment addressed to it, with the
// packet's data starting at the TCP header (the flags are byte 13).
func refuseHandshakes(ln net.Listener) error {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return errors.ErrUnsupported
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	const (
		flagsOffset = 13
		syn, ack    = 0x02, 0x10
	)
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_B | unix.BPF_ABS, K: flagsOffset},
		{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: syn | ack},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: syn, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: 0},          // a connection request: drop it
		{Code: unix.BPF_RET | unix.BPF_K, K: 0xffffffff}, // anything else: keep all of it
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog)
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("attach the handshake filter: %w", serr)
	}
	return nil
}
