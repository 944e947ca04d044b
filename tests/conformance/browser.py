#!/usr/bin/env python3
"""The `$BROWSER` of conformance runs: opens the sign-in URL the way a browser would, following
every redirect (the authorization server's redirect ends at wave-mcp's loopback callback)."""
import sys
import urllib.request

try:
    with urllib.request.urlopen(sys.argv[1], timeout=20) as response:
        response.read()
except Exception as error:  # a callback page answering 400 is wave-mcp's business, not ours
    print(f"browser: {error}", file=sys.stderr)
