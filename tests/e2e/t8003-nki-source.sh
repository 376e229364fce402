#!/bin/bash
# t8003-nki-source.sh: the kernel sources a NEFF carries. `nki run` puts the kernel's file
# in its NEFF (kernel_source/<name>), and the files of the helpers it calls, and `view`
# attaches them: the API's artifacts list and fs route give back the files' text, also
# from a copy of the NEFF and NTFF elsewhere. An
# uploaded archive is never replaced by a NEFF's (and survives re-ingests); a NEFF's
# archive goes with its NEFF (an edited kernel's replaces it, a NEFF without one removes
# it). Bad inputs: `kernel asm --attach-source` refuses a missing or oversized file (exit
# 2, no NEFF); a NEFF whose kernel_source member is oversized, badly named or doubled is
# ingested with a warning naming why and no archive; a kernel file over 1 MiB is run
# with a note, its NEFF carrying no source; `kernel asm` refuses two files of one name
# and attaches a file given twice once.
set -u
BIN=${NX_BIN:?NX_BIN not set}
PY=${NX_PYTHON:-/usr/bin/python3}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t8003
"$PY" -c 'import numpy' 2>/dev/null || { echo "skip: no python3 with numpy"; exit 0; }
e2e_cleanup() { for p in ${PIDS:-}; do kill "$p"; wait "$p"; done 2> /dev/null; }
G=dp/profiles/global

cat > kern.py <<'EOF'
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def double(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        x = nl.load(a[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.add(x, x))
    return out
EOF
run() { # NAME [FILE]: nki run of FILE (kern.py) into run.neff/run.ntff, ingested as NAME
	"$BIN" nki run "${2:-kern.py}" --entry double --input a=256x128 -n run.neff -s run.ntff \
		--data-path dp --display-name "$1" > run.log 2>&1 ||
		{ cat run.log; fail "nki run $1"; }
}
member() { # ARCHIVE NAME: the member's bytes on stdout
	"$PY" -c 'import sys, tarfile
t = tarfile.open(sys.argv[1])
sys.stdout.buffer.write(t.extractfile(sys.argv[2]).read())' "$1" "$2"
}

# nki run -> view: the API lists the archive and serves the kernel's text
run k1
e2e_serve srv.log --data-path dp
B="http://127.0.0.1:$PORT/api/v1/profiles/namespace/global/profile_name"
curl -sf "$B/k1/artifacts?types=source-code" > art.json || fail "artifacts"
grep -q '"type":"source-code","name":"source_folder.tar.gz"' art.json ||
	fail "no source archive: $(cat art.json)"
curl -sf -o got.tgz "$B/k1/fs/source_folder.tar.gz" || fail "fs route"
[ "$(tar -tzf got.tgz)" = kern.py ] || fail "archive members: $(tar -tzf got.tgz)"
member got.tgz kern.py | cmp -s - kern.py || fail "the archive's kern.py is not the kernel's text"
# the instructions name the same file, so the source view matches them
"$BIN" nki run kern.py --entry double --input a=256x128 -n run.neff -s run.ntff \
	--listing run.listing > /dev/null 2>&1 || fail "nki run --listing"
grep -q "^source $T/kern.py" run.listing || fail "listing source line"

# the NEFF and NTFF copied elsewhere, the kernel's file gone: the profile still has it
mkdir far && cp run.neff run.ntff far/ && mv kern.py kern.py.away
"$BIN" view -n far/run.neff -s far/run.ntff --data-path dp --display-name far --ingest-only -q \
	> /dev/null 2>&1 || fail "view of the copies"
member $G/far@latest/source_folder.tar.gz kern.py | cmp -s - kern.py.away ||
	fail "the copy's source"
mv kern.py.away kern.py

# a helper in another folder, called by the kernel: its file goes with the kernel's, and
# the instructions it made point at it
mkdir lib && printf 'import neuronxcc.nki.language as nl\n\n\ndef twice(x):\n    return nl.add(x, x)\n' > lib/helpers.py
{ printf 'import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))\n'
	printf 'from helpers import twice  # noqa: E402\n'
	sed 's/value=nl.add(x, x)/value=twice(x)/' kern.py; } > kern2.py
run h2 kern2.py
[ "$(tar -tzf $G/h2@latest/source_folder.tar.gz | tr '\n' ' ')" = "kern2.py helpers.py " ] ||
	fail "the helper's archive: $(tar -tzf $G/h2@latest/source_folder.tar.gz)"
member $G/h2@latest/source_folder.tar.gz helpers.py | cmp -s - lib/helpers.py ||
	fail "the archive's helpers.py is not the helper's text"
"$BIN" nki run kern2.py --entry double --input a=256x128 -n h2.neff -s h2.ntff \
	--listing h2.listing > /dev/null 2>&1 || fail "nki run kern2.py --listing"
grep -q "^@$T/lib/helpers.py:5 " h2.listing || fail "no instruction points at the helper"
mkdir again && cp kern.py again/
"$BIN" kernel asm h2.listing -o dup.neff --attach-source kern.py --attach-source again/kern.py 2> err.txt
[ $? = 2 ] && [ ! -e dup.neff ] || fail "two sources of one name: $(cat err.txt)"
grep -q "two kernel sources are named 'kern.py'" err.txt || fail "message: $(cat err.txt)"

# an uploaded archive wins over the NEFF's, and stays through re-ingests
mkdir up && echo "# the user's own upload" > up/kern.py && echo "x = 1" > up/helper.py
"$BIN" upload --source-code up --data-path dp --display-name k1 > /dev/null || fail "upload"
cp $G/k1@latest/source_folder.tar.gz uploaded.tgz
run k1
cmp -s $G/k1@latest/source_folder.tar.gz uploaded.tgz || fail "a re-ingest replaced the upload"
run k1
cmp -s $G/k1@latest/source_folder.tar.gz uploaded.tgz ||
	fail "a second re-ingest replaced the upload"

# a NEFF's archive goes with its NEFF: an edited kernel's replaces it; none removes it
run k2
printf '# edited\n' >> kern.py
run k2
member $G/k2@latest/source_folder.tar.gz kern.py | tail -1 | grep -qx '# edited' ||
	fail "the edited kernel's source did not replace the previous NEFF's"
"$BIN" kernel gen matmul_v0 --size 512 -o gen.neff -q || fail "kernel gen"
"$BIN" capture -n gen.neff -s gen.ntff -q || fail "capture"
"$BIN" view -n gen.neff -s gen.ntff --data-path dp --display-name k2 --ingest-only -q \
	> /dev/null 2>&1 || fail "view of a NEFF without source"
[ ! -e $G/k2@latest/source_folder.tar.gz ] || fail "a NEFF without source kept the previous NEFF's"
curl -sf "$B/k2/artifacts?types=source-code" | grep -q '"artifacts":\[\]' || fail "k2 artifacts"

# kernel asm --attach-source: bad files are usage errors and leave no NEFF
"$BIN" kernel asm run.listing -o a.neff --attach-source nosuch.py 2> err.txt
[ $? = 2 ] && [ ! -e a.neff ] || fail "a missing source: $(cat err.txt)"
grep -q "attach-source 'nosuch.py' is not a regular file" err.txt || fail "message: $(cat err.txt)"
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' '#' > big.py
"$BIN" kernel asm run.listing -o a.neff --attach-source big.py 2> err.txt
[ $? = 2 ] && [ ! -e a.neff ] || fail "an oversized source: $(cat err.txt)"
grep -q "the kernel source 'big.py' is 1.0 MiB; a NEFF carries at most 1 MiB" err.txt ||
	fail "message: $(cat err.txt)"
"$BIN" kernel asm run.listing -o a.neff --attach-source kern.py || fail "kernel asm --attach-source"
cmp -s a.neff run.neff || fail "kernel asm --attach-source differs from nki run's NEFF"
# one file given twice (under two names) is attached once; --listing keeps a copy of the
# listing; --check checks the outputs and writes nothing
"$BIN" kernel asm run.listing -o a2.neff --attach-source kern.py --attach-source ./kern.py \
	--listing copy.listing 2> err.txt || fail "kernel asm, one source twice: $(cat err.txt)"
cmp -s a2.neff run.neff || fail "one source given twice: another NEFF"
cmp -s copy.listing run.listing || fail "kernel asm --listing: not the listing's copy"
"$BIN" kernel asm --check -o a3.neff --listing copy.listing 2> err.txt || fail "--check: $(cat err.txt)"
[ ! -e a3.neff ] || fail "--check wrote the NEFF"
"$BIN" kernel asm --check -o a3.neff --listing kern.py 2> err.txt
[ $? = 2 ] && grep -q "the output 'kern.py' exists and is not a kernel listing" err.txt ||
	fail "--check over a user's file: $(cat err.txt)"
# --listing and -o naming one file under two spellings: refused before anything is written
"$BIN" kernel asm run.listing -o ./same.neff --listing same.neff 2> err.txt
[ $? = 2 ] && grep -q "are the same file" err.txt || fail "asm, one file for both: $(cat err.txt)"
[ ! -e same.neff ] || fail "asm, one file for both: the NEFF was written"
"$BIN" kernel gen matmul_v0 --size 128 -o same.neff --listing "$T/same.neff" 2> err.txt
[ $? = 2 ] && grep -q "are the same file" err.txt || fail "gen, one file for both: $(cat err.txt)"
[ ! -e same.neff ] || fail "gen, one file for both: the NEFF was written"

# NEFFs whose kernel_source members break the rules: ingested without them, with a warning
"$PY" - run.neff <<'EOF' || fail "making the bad NEFFs"
import gzip, hashlib, io, struct, sys, tarfile
neff = open(sys.argv[1], 'rb').read()
head, payload = bytearray(neff[:1024]), gzip.decompress(neff[1024:])
def bad(out, members):
    src = tarfile.open(fileobj=io.BytesIO(payload))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode='w', format=tarfile.GNU_FORMAT) as t:
        for m in src.getmembers():
            if not m.name.startswith('kernel_source/'):
                t.addfile(m, src.extractfile(m))
        for name, data in members:
            i = tarfile.TarInfo(name); i.size = len(data); t.addfile(i, io.BytesIO(data))
    gz = gzip.compress(buf.getvalue())
    h = bytearray(head)
    assert struct.unpack_from('<Q', h, 0)[0] == 1
    struct.pack_into('<Q', h, 16, len(gz))
    h[172:204] = hashlib.sha256(gz).digest()
    open(out, 'wb').write(bytes(h) + gz)
bad('big.neff', [('kernel_source/kern.py', b'#' * ((1 << 20) + 1))])
bad('slash.neff', [('kernel_source/a/kern.py', b'x = 1\n')])
bad('two.neff', [('kernel_source/a.py', b'a\n'), ('kernel_source/a.py', b'b\n')])
EOF
for k in big:"'kernel_source/kern.py': the kernel source 'kern.py' is 1.0 MiB" \
	slash:"'kernel_source/a/kern.py': the kernel source's name holds '/'" \
	two:"two kernel sources are named 'a.py'"; do
	n=${k%%:*}
	"$BIN" view -n $n.neff -s run.ntff --data-path dp --display-name bad-$n --ingest-only -q \
		> out.txt 2> err.txt || fail "view of $n.neff: $(cat err.txt)"
	grep -qF "the profile has no source archive from its NEFF: $n.neff: " err.txt &&
		grep -qF "${k#*:}" err.txt || fail "$n.neff: the warning: $(cat err.txt)"
	[ ! -e $G/bad-$n@latest/source_folder.tar.gz ] || fail "$n.neff: an archive was stored"
	[ -s $G/bad-$n@latest/Instruction.parquet ] || fail "$n.neff: no Instruction table"
done
# capture does not mind them
"$BIN" capture -n big.neff -s big.ntff -q || fail "capture of big.neff"

# a kernel file over 1 MiB: run, with a note, and its NEFF carries no source
{ cat kern.py; head -c $((1024 * 1024)) /dev/zero | tr '\0' '#'; echo; } > large.py
run k3 large.py
grep -q "^note: the NEFF does not carry $T/large.py: a NEFF carries at most 1 MiB of source in all (large.py is 1.0 MiB)" run.log ||
	{ cat run.log; fail "no note for an oversized kernel file"; }
[ ! -e $G/k3@latest/source_folder.tar.gz ] || fail "an oversized kernel file was attached"
exit 0
