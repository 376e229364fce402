# SPDX-License-Identifier: MIT
# first_key.py SUMMARY_JSON: reads `view --output-format summary-json` the way public
# kernel-tuning harnesses do: the Summary is the value of the document's first key.
import json
import sys

with open(sys.argv[1]) as f:
    data = json.load(f)
latency = data[next(iter(data))]["total_time"]
print(next(iter(data)), latency)
