package main

// defaults holds every config key with its built-in value. configs/timeaware.yaml
// documents the same keys; a test keeps the two in step.
var defaults = map[string]any{
	"pairs.time_format":          "iso",
	"pairs.format":               "",
	"pairs.min_margin":           0.0,
	"pairs.confident_only":       false,
	"pairs.label_only_margin":    1.0,
	"pairs.tool_response":        "last_turn",
	"pairs.max_inconsistencies":  1,
	"pairs.workers":              0,
	"pairs.zstd_level":           1,
	"pairs.row_group_rows":       16384,
	"pairs.split":                "",
	"pairs.seed":                 0,
	"pairs.test_fraction":        0.35,
	"pairs.catalog":              "",
	"pairs.generate.url":         "",
	"pairs.generate.model":       "",
	"pairs.generate.api_key_env": "OPENAI_API_KEY",
	"pairs.generate.concurrency": 8,
	"pairs.generate.max_retries": 4,
	"pairs.generate.timeout":     "120s",
	"pairs.generate.cache_dir":   ".timeaware-cache/direct",
	"pairs.generate.temperature": 0.0,
	"pairs.generate.max_tokens":  0,
	"pairs.generate.instruction": "",

	"splits.test_fraction":            0.35,
	"splits.tolerance":                0.05,
	"splits.near_duplicate_threshold": 0.8,
	"splits.shingle_words":            5,
	"splits.permutations":             128,
	"splits.bands":                    0,
	"splits.sensitivities":            "low,medium,high",
	"splits.max_findings":             20,
}
