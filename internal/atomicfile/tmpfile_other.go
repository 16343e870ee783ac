//go:build !linux

package atomicfile

import (
	"errors"
	"os"
)

var errNoTmpfile = errors.New("unnamed temporary files are a Linux feature")

func openTmpfile(string) (*os.File, error) { return nil, errNoTmpfile }

func linkTmpfile(*os.File, string) error { return errNoTmpfile }
