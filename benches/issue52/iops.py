import json,sys
"""Issue 52 measurement helpers; see docs/PERFORMANCE.md (second round of the block tracer)."""
j=json.load(sys.stdin)
print(f'{j["jobs"][0]["read"]["iops"]:.0f}')
