#!/usr/bin/env python3
"""split_schema.py: splits `neuron-explorer --show-profile-schema` output into one YAML
file per top-level key, the way the seed workflow's helper does: the document holding
`openapi:` becomes schema.yaml, every other block <Key>.yaml. Written here for tests."""
import os
import re
import sys


def main():
    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else "./schema"
    os.makedirs(out, exist_ok=True)
    text = sys.stdin.read()
    for doc in re.split(r"^---\s*$", text, flags=re.M):
        if not doc.strip():
            continue
        keys = re.findall(r"^([A-Za-z_][A-Za-z0-9_]*):", doc, flags=re.M)
        if not keys:
            sys.exit("block without a top-level key")
        name = "schema" if keys[0] == "openapi" else keys[0]
        if name != "schema" and len(keys) != 1:
            sys.exit(f"block {name} has {len(keys)} top-level keys")
        with open(os.path.join(out, name + ".yaml"), "w") as f:
            f.write(doc.lstrip("\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
