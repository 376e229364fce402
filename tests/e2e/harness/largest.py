# SPDX-License-Identifier: MIT
# largest.py SUMMARY_JSON: reads summary-json the way harnesses that profile several
# NeuronCores do: the profile that took longest decides the latency.
import json
import sys

with open(sys.argv[1]) as f:
    data = json.load(f)
slowest = max(data.values(), key=lambda s: s["total_time"])
print(len(data), slowest["total_time"])
