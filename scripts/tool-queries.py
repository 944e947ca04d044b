#!/usr/bin/env python3
# Bench row 8 / BUD-7: turns bench/fixtures/tool_queries.txt (query|server__tool, hand-written before any
# ranking change) into bench/fixtures/tool_queries.json with the tune/held split (sha256 of the query)
# and whether a query shares a word with its tool's name. `show` prints the ones that do; `write` writes.
import json, hashlib, re, glob, sys, os
# `held2`: bench/fixtures/tool_queries_held2.txt -> tool_queries_held2.json, every query in half
# `held2` (a second held-out set written after the first one had been seen, before further tuning).
HELD2 = 'held2' in sys.argv
STEM = 'tool_queries_held2' if HELD2 else 'tool_queries'
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
cat = {}
for f in glob.glob(os.path.join(ROOT, 'bench/fixtures/catalog/*.json')):
    d = json.load(open(f))
    for t in d['tools']:
        cat[f"mcp__{d['server']}__{t['name']}"] = t
def words(s):
    s = re.sub(r'([a-z])([A-Z])', r'\1 \2', s)
    out=set()
    for w in re.split(r'[^A-Za-z0-9]+', s):
        w=w.lower()
        if not w: continue
        if len(w)>3 and w.endswith('s') and not w.endswith('ss'): w=w[:-1]
        out.add(w)
    return out
out = []
for line in open(os.path.join(ROOT, f'bench/fixtures/{STEM}.txt')):
    line = line.rstrip('\n')
    if not line or line.startswith('#'): continue
    q, t = line.split('|')
    tool = f"mcp__{t}" if t else None
    if tool and tool not in cat: print("UNKNOWN", tool)
    half = "held2" if HELD2 else "tune" if hashlib.sha256(q.encode()).digest()[0] % 2 == 0 else "held"
    shared = sorted(words(q) & words(tool.split('__',2)[2])) if tool else []
    out.append({"query": q, "tool": tool, "half": half, "sharesNameWord": bool(shared)})
    if shared and 'show' in sys.argv: print(q, '|', tool, shared)
qs = [o for o in out if o['tool']]
para = [o for o in qs if not o['sharesNameWord']]
print(len(qs), 'queries', len(para), 'share no word with the tool name', len(out)-len(qs), 'nothing')
for h in ('tune','held','held2'):
    print(h, sum(o['half']==h for o in qs), sum(o['half']==h for o in para), sum(o['half']==h and not o['tool'] for o in out))
if 'write' in sys.argv:
    json.dump({"source": ("second held-out set (issue 27, BUD-7), written by hand after the first held-out half had been seen and before any further ranking change; every query is in half held2. " if HELD2 else "") + "written by hand before any ranking change (issue 27, BUD-7): a capability asked for in an agent's words and the one tool (full name) it wants; tool null: no tool does it, the search should return nothing. half: sha256(query)[0] even = tune, odd = held (never tuned on). sharesNameWord: the query shares a word (lowercased, plural s dropped) with the tool's own name.", "queries": out}, open(os.path.join(ROOT, f'bench/fixtures/{STEM}.json'),'w'), indent=1)
    open(os.path.join(ROOT, f'bench/fixtures/{STEM}.json'),'a').write('\n')
