package verifier

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRefuseHandshakes: once the filter is on, a connection already
// waiting is still accepted and answered, a new one never completes its
// handshake, and when the listener closes the new one is refused, never
// reset after sending.
func TestRefuseHandshakes(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(addr, func(t *testing.T) {
			ln, err := listenTCP(addr)
			if err != nil && addr[0] == '[' {
				t.Skipf("no IPv6 loopback: %v", err)
			}
			require.NoError(t, err)
			refuseHandshakesOn(t, ln)
		})
	}
}

func refuseHandshakesOn(t *testing.T, ln net.Listener) {
	addr := ln.Addr().String()
	waiting, err := net.Dial("tcp", addr) // in the accept queue
	require.NoError(t, err)
	defer waiting.Close()

	require.NoError(t, refuseHandshakes(ln))

	late := make(chan error, 1)
	go func() {
		c, err := net.DialTimeout("tcp", addr, 30*time.Second)
		if err == nil {
			c.Close()
		}
		late <- err
	}()

	c, err := ln.Accept()
	require.NoError(t, err, "the connection that was waiting is accepted")
	_, err = waiting.Write([]byte("ping"))
	require.NoError(t, err)
	buf := make([]byte, 4)
	_, err = c.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "ping", string(buf))
	c.Close()

	select {
	case err := <-late:
		t.Fatalf("a connection completed its handshake after the filter (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, ln.Close())
	err = <-late
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ECONNREFUSED, "the late client is refused once the listener is closed")
}

// TestRefuseHandshakesNeedsAPlainTCPListener: a listener the filter
// cannot go on (one that is not a socket; multipath TCP, which takes no
// socket filter) is an error, which the drain reports before it falls back
// to its quiet period; this is why Run listens on plain TCP.
func TestRefuseHandshakesNeedsAPlainTCPListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	assert.ErrorIs(t, refuseHandshakes(struct{ net.Listener }{ln}), errors.ErrUnsupported)

	var lc net.ListenConfig
	lc.SetMultipathTCP(true)
	mln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer mln.Close()
	var d net.Dialer
	d.SetMultipathTCP(true)
	c, err := d.Dial("tcp", mln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	if mp, err := c.(*net.TCPConn).MultipathTCP(); err != nil || !mp {
		t.Skip("this kernel has no multipath TCP")
	}
	assert.Error(t, refuseHandshakes(mln))
}
