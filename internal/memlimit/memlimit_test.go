package memlimit

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const meminfo = "MemTotal:       24684084 kB\nMemFree:        23947192 kB\n"

func TestFind(t *testing.T) {
	machine := int64(24684084) << 10
	tests := []struct {
		name  string
		files map[string]string
		want  Ceiling
		err   string
	}{
		{"machine only", map[string]string{}, Ceiling{machine, Machine}, ""},
		{"cgroup v2 limit", map[string]string{"sys/fs/cgroup/memory.max": "536870912\n"}, Ceiling{512 << 20, CgroupV2}, ""},
		{"cgroup v2 unlimited", map[string]string{"sys/fs/cgroup/memory.max": "max\n"}, Ceiling{machine, Machine}, ""},
		{"cgroup v1 limit", map[string]string{"sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824"}, Ceiling{1 << 30, CgroupV1}, ""},
		{"cgroup v1 unlimited", map[string]string{"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712"}, Ceiling{machine, Machine}, ""},
		{"cgroup above the machine", map[string]string{"sys/fs/cgroup/memory.max": "99999999999999"}, Ceiling{machine, Machine}, ""},
		{"v2 wins over v1", map[string]string{"sys/fs/cgroup/memory.max": "2147483648", "sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824"}, Ceiling{2 << 30, CgroupV2}, ""},
		{"own v2 cgroup", map[string]string{"proc/self/cgroup": "0::/system.slice/job.service\n", "sys/fs/cgroup/system.slice/job.service/memory.max": "268435456\n", "sys/fs/cgroup/system.slice/memory.max": "max\n"}, Ceiling{256 << 20, CgroupV2}, ""},
		{"ancestor v2 cgroup binds", map[string]string{"proc/self/cgroup": "0::/a/b\n", "sys/fs/cgroup/a/b/memory.max": "max", "sys/fs/cgroup/a/memory.max": "1073741824", "sys/fs/cgroup/memory.max": "2147483648"}, Ceiling{1 << 30, CgroupV2}, ""},
		{"own cgroup not mounted here", map[string]string{"proc/self/cgroup": "0::/elsewhere\n", "sys/fs/cgroup/memory.max": "536870912"}, Ceiling{512 << 20, CgroupV2}, ""},
		{"own v1 memory cgroup", map[string]string{"proc/self/cgroup": "12:cpu,cpuacct:/x\n7:memory:/docker/abc\n0::/\n", "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "134217728"}, Ceiling{128 << 20, CgroupV1}, ""},
		{"dot-dot path reads the root only", map[string]string{"proc/self/cgroup": "0::/../x\n", "sys/fs/cgroup/x/memory.max": "1048576", "sys/fs/cgroup/memory.max": "536870912"}, Ceiling{512 << 20, CgroupV2}, ""},
		{"garbage in an ancestor", map[string]string{"proc/self/cgroup": "0::/a\n", "sys/fs/cgroup/a/memory.max": "max", "sys/fs/cgroup/memory.max": "lots"}, Ceiling{}, `/sys/fs/cgroup/memory.max: "lots" is not a number`},
		{"garbage limit", map[string]string{"sys/fs/cgroup/memory.max": "lots"}, Ceiling{}, `/sys/fs/cgroup/memory.max: "lots" is not a number`},
		{"no meminfo", nil, Ceiling{}, "proc/meminfo"},
		{"meminfo without MemTotal", map[string]string{"proc/meminfo": "MemFree: 1 kB\n"}, Ceiling{}, "no MemTotal"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := fstest.MapFS{}
			if tc.files != nil {
				root["proc/meminfo"] = &fstest.MapFile{Data: []byte(meminfo)}
			}
			for p, d := range tc.files {
				root[p] = &fstest.MapFile{Data: []byte(d)}
			}
			got, err := find(root)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestFindOnThisHost(t *testing.T) {
	c, err := Find()
	require.NoError(t, err)
	assert.Positive(t, c.Bytes)
	assert.NotEmpty(t, c.Source)
}
