#!/usr/bin/env python3
# Bench row 8 / BUD-7: turns bench/fixtures/tool_queries.txt (query|server__tool, hand-written before any
# ranking change) into bench/fixtures/tool_queries.json with the tune/held split (sha256 of the query)
# and whether a query shares a word with its tool's name. `show` prints the ones that do; `write` writes.
import json, hashlib, re, glob, sys, os
# `heldN` (held2, held3, ...): bench/fixtures/tool_queries_heldN.txt -> tool_queries_heldN.json, every
# query in half `heldN` (a further held-out set, written after the earlier ones, before further tuning).
HELDN = next((a for a in sys.argv[1:] if re.fullmatch(r'held[0-9]+', a)), None)
STEM = f'tool_queries_{HELDN}' if HELDN else 'tool_queries'
SOURCE = {
    'held2': "second held-out set (issue 27, BUD-7), written by hand after the first held-out half had been seen and before any further ranking change; every query is in half held2. ",
    'held3': "third held-out set (issue 27, BUD-7), written blind by hand (from the catalog only, without seeing the ranking, its synonyms or the earlier query sets) before any further ranking change; every query is in half held3. ",
    'held4': "fourth held-out set (issue 27, BUD-7), written blind by hand on 2026-12-06 (from the catalog only, without seeing the ranking, its synonyms, the earlier query sets or any eval output) before any further ranking change; every query is in half held4. ",
    'held5': "fifth held-out set (issue 27, BUD-7), written blind by hand on 2026-12-06 (from the catalog only, without seeing the ranking, its synonyms, the earlier query sets or any eval output) before any further ranking change; every query is in half held5. ",
    'held6': "sixth held-out set (issue 27, BUD-7), written blind by hand on 2026-12-07 (from the catalog only, without seeing the ranking, its synonyms, the earlier query sets or any eval output) before any further ranking change; every query is in half held6. ",
    'held7': "seventh held-out set (issue 27, BUD-7), written blind by hand on 2026-12-07 (from the catalog only, without seeing the ranking, its synonyms, the earlier query sets or any eval output) before any further ranking change; every query is in half held7. ",
    'held8': "eighth held-out set (issue 27, BUD-7), written blind by hand on 2026-12-07 (from the catalog only, without seeing the ranking, its synonyms, the earlier query sets or any eval output) before any further ranking change; every query is in half held8. ",
    'held9': "ninth held-out set (issue 27, BUD-7), written blind by hand on 2026-12-07 (from the catalog only, without seeing the ranking, its synonyms, the earlier query sets or any eval output) before any further ranking change; every query is in half held9. ",
}
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
    half = HELDN or ("tune" if hashlib.sha256(q.encode()).digest()[0] % 2 == 0 else "held")
    shared = sorted(words(q) & words(tool.split('__',2)[2])) if tool else []
    out.append({"query": q, "tool": tool, "half": half, "sharesNameWord": bool(shared)})
    if shared and 'show' in sys.argv: print(q, '|', tool, shared)
qs = [o for o in out if o['tool']]
para = [o for o in qs if not o['sharesNameWord']]
print(len(qs), 'queries', len(para), 'share no word with the tool name', len(out)-len(qs), 'nothing')
for h in ('tune','held') + ((HELDN,) if HELDN else ()):
    print(h, sum(o['half']==h for o in qs), sum(o['half']==h for o in para), sum(o['half']==h and not o['tool'] for o in out))
if 'write' in sys.argv:
    json.dump({"source": SOURCE.get(HELDN, "") + "written by hand before any ranking change (issue 27, BUD-7): a capability asked for in an agent's words and the one tool (full name) it wants; tool null: no tool does it, the search should return nothing. half: sha256(query)[0] even = tune, odd = held (never tuned on). sharesNameWord: the query shares a word (lowercased, plural s dropped) with the tool's own name.", "queries": out}, open(os.path.join(ROOT, f'bench/fixtures/{STEM}.json'),'w'), indent=1)
    open(os.path.join(ROOT, f'bench/fixtures/{STEM}.json'),'a').write('\n')
