# SPDX-License-Identifier: MIT
# json_trace.py PROFILE_JSON: reads `view --output-format json` (the legacy parsable
# format) the way tuning tools take the per-instruction trace: loads the document, sums
# the instructions' durations, and prints the totals and the time per opcode.
import json
import sys
from collections import defaultdict

with open(sys.argv[1]) as f:
    profile = json.load(f)
summary = profile["summary"][0]
instructions = profile["instruction"]
busy = sum(i["duration"] for i in instructions)
print("instructions", len(instructions))
print("duration", busy)
print("total_time", summary["total_time"])
print("dma", len(profile["dma"]))
print("dma_packet", len(profile["dma_packet"]))
print("semaphore", len(profile["semaphore"]))
first = min(i["timestamp"] for i in instructions)
last = max(i["timestamp"] + i["duration"] for i in instructions)
print("span", last - first)
per_opcode = defaultdict(int)
for i in instructions:
    per_opcode[i["opcode"]] += i["duration"]
for opcode in sorted(per_opcode):
    print("opcode", opcode, per_opcode[opcode])
