"""datatrove's n-gram decontamination on the contamination benchmark's files.

Usage: baseline.py DIR N_GRAM WORKERS

DIR holds bench.jsonl ({id, text: answer, query: question, task}),
train-subset.jsonl ({id, text}) and truth.json (planted row -> kind), as
bench/contamination/gen writes them. The index is built with datatrove's
own NGramsDecontIndexer.compute_hashes (its indexer step requires lighteval,
whose current releases no longer have the API it calls) into the same
<task>.index.hashes files, and datatrove's unmodified NGramsDecontFilter
filters the rows, in WORKERS tasks. Config: N_GRAM-word n-grams, query
n-grams on (the question is what the check looks for), overlap n-grams on,
the default normalisation and xxhash64. Prints one JSON line: timings,
rows, removed rows and recall per planted kind.
"""

import json
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict

import numpy as np
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.base import PipelineStep
from datatrove.pipeline.decont import NGramsDecontConfig, NGramsDecontFilter, NGramsDecontIndexer
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from datatrove.utils.hashing import create_hash_func
from datatrove.utils.typeshelper import Languages
from datatrove.utils.word_tokenizers import load_word_tokenizer


class LocalIndexer(PipelineStep):
    """NGramsDecontIndexer's hashes and files, from the input documents only."""

    name = "local n-gram index"

    def __init__(self, out, config=None, language=Languages.english):
        super().__init__()
        self.out = out
        self.config = config or NGramsDecontConfig()
        self.tokenizer = load_word_tokenizer(language)
        self.hash_func = create_hash_func(self.config.hash_config)

    compute_hashes = NGramsDecontIndexer.compute_hashes  # datatrove's exact logic

    def run(self, data=None, rank=0, world_size=1):
        hashes = defaultdict(set)
        for d in data or []:
            hashes[d.metadata.get("task", "input")].update(self.compute_hashes(d.text, d.metadata.get("query")))
        os.makedirs(self.out, exist_ok=True)
        for t, s in hashes.items():
            np.array(sorted(s), dtype="<u8").tofile(f"{self.out}/{t.replace(' ', '_')}.index.hashes")
        return iter(())


def main():
    src, n, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    work = tempfile.mkdtemp(prefix="timeaware-datatrove-")
    try:
        # One input file per task, so that the tasks share the rows.
        os.makedirs(f"{work}/bench")
        shutil.copy(f"{src}/bench.jsonl", f"{work}/bench/bench.jsonl")
        os.makedirs(f"{work}/train")
        parts = [open(f"{work}/train/part{k}.jsonl", "w") for k in range(workers)]
        rows = 0
        with open(f"{src}/train-subset.jsonl") as f:
            for line in f:
                parts[rows % workers].write(line)
                rows += 1
        for p in parts:
            p.close()
        cfg = NGramsDecontConfig(n_grams=n, find_query_ngrams=True, find_overlap_ngrams=True)
        t0 = time.time()
        LocalPipelineExecutor([JsonlReader(f"{work}/bench", compression=None), LocalIndexer(f"{work}/index", cfg)],
                              tasks=1, logging_dir=f"{work}/logs/index").run()
        t1 = time.time()
        LocalPipelineExecutor([JsonlReader(f"{work}/train", compression=None),
                               NGramsDecontFilter(f"{work}/index", config=cfg,
                                                  exclusion_writer=JsonlWriter(f"{work}/removed", compression=None))],
                              tasks=workers, workers=workers, logging_dir=f"{work}/logs/filter").run()
        t2 = time.time()
        removed = set()
        if os.path.isdir(f"{work}/removed"):
            for fn in os.listdir(f"{work}/removed"):
                with open(f"{work}/removed/{fn}") as f:
                    removed.update(json.loads(line)["id"] for line in f)
        truth = json.load(open(f"{src}/truth.json"))
        recall = defaultdict(lambda: [0, 0])
        for tid, p in truth.items():
            recall[p["kind"]][1] += 1
            recall[p["kind"]][0] += tid in removed
        print(json.dumps({"index_seconds": t1 - t0, "filter_seconds": t2 - t1, "rows": rows, "removed": len(removed),
                          "false_positives": len(removed - set(truth)),
                          "recall": {k: v[0] / v[1] for k, v in sorted(recall.items())}}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
