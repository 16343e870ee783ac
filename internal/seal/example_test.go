package seal_test

import (
	"errors"
	"fmt"

	"github.com/timeaware/timeaware/internal/seal"
)

// A service seals the state it hands a client and opens what comes back.
func Example() {
	s, err := seal.New([]byte("replicas share this secret......"), "cart", 1<<10)
	if err != nil {
		panic(err)
	}
	tok, err := s.Seal([]byte(`{"items":3}`))
	if err != nil {
		panic(err)
	}
	state, err := s.Open(tok)
	fmt.Println(string(state), err)

	edited := []byte(tok)
	edited[len(edited)/2] ^= 1 // one character changed
	_, err = s.Open(string(edited))
	fmt.Println(errors.Is(err, seal.ErrInvalid))
	// Output:
	// {"items":3} <nil>
	// true
}
