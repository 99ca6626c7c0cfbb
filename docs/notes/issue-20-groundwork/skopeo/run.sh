#!/bin/bash
# run.sh MODE skopeo-args...  : runs skopeo with the fake helper in MODE, prints helper calls + registry requests
cd /tmp/groundwork20/skopeo
export HOME=$PWD/home XDG_RUNTIME_DIR=$PWD/xdg PATH=$PWD/bin:$PATH
mode=$1; shift
: > helper.log
start=$(stat -c %s registry.log)
echo "=== helper mode=$mode: skopeo $*"
GW_HELPER_MODE=$mode timeout 30 skopeo "$@" > out.$mode 2> err.$mode; echo "rc=$?"
head -c ${HEAD:-300} out.$mode; echo; cat err.$mode
sed 's/^/  helper: /' helper.log
tail -c +$((start+1)) registry.log | tr -d '\000' | python3 -c "
import json,sys
for l in sys.stdin:
    l=l.strip()
    if not l: continue
    d=json.loads(l)
    if 'method' in d: print('  req:', d['method'], d['path'], d['query'] or '', d['authorization'], d['form'] or '', d['content_type'] or '')"
