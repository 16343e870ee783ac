package configs

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEmbeddedFilesNonEmpty(t *testing.T) {
	assert.NotEmpty(t, Scenarios, "scenarios.yaml is not embedded")
	assert.Contains(t, string(Scenarios), "scenarios:")
}
