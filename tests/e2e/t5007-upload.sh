#!/bin/bash
# t5007-upload.sh: `upload` streams (a 60 MiB file costs tens of MB of memory, not the
# file), has one cap (64 MiB unpacked) refused before reading where sizes tell (a 1.5 GB
# file, a directory, an archive's gzip trailer) and while reading otherwise (an archive
# that unpacks to more), keeps nothing of a refused upload, names long paths; the
# README's order view, upload, view keeps the archive; an upload racing re-ingests lands
# in the published version every time; and its messages and exit codes.
set -u
BIN=${NX_BIN:?NX_BIN not set}
PY=/usr/bin/python3
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5007
msg() { grep -qF -- "$1" err.txt || fail "message lacks '$1': $(cat err.txt)"; }
A=dp/profiles/global/p@latest/source_folder.tar.gz
# peak RSS of a command in kB (GNU time's %M), its exit status in $RC
rss() { /usr/bin/time -f %M -o rss.txt "$@" > out.txt 2> err.txt; RC=$?; RSS=$(tail -1 rss.txt); }
[ -x /usr/bin/time ] || { echo "skip: /usr/bin/time is missing (apt-get install time)"; exit 77; }

"$BIN" kernel gen matmul_v0 --size 512 -o k.neff -q || fail "kernel gen"
NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n k.neff -s k.ntff -q || fail "capture"
ING=("$BIN" view -n k.neff -s k.ntff -q --data-path dp --display-name p --ingest-only)
U=("$BIN" upload --data-path dp --display-name p)
"${ING[@]}" > /dev/null || fail "ingest"

# messages and exit codes
"${U[@]}" --source-code nosuch 2> err.txt; [ $? -eq 1 ] || fail "a missing source: not 1"
msg "neuron-explorer upload: 'nosuch': no such file or directory"
"$BIN" upload --data-path dp --display-name q --source-code k.neff 2> err.txt
[ $? -eq 1 ] || fail "a missing profile: not 1"
msg "no profile 'q' in 'dp': ingest it first"
echo x > afile
"$BIN" upload --data-path afile --display-name p --source-code k.neff 2> err.txt
[ $? -eq 2 ] || fail "a data path that is a file: not 2"
msg "the data path 'afile' is not a directory"
mkdir nothing
"${U[@]}" --source-code nothing 2> err.txt; [ $? -eq 2 ] || fail "an empty directory: not 2"
msg "'nothing' holds no regular files"

# a directory with a long path and a link: streamed, long names kept, links left out
long=src/$(printf 'd%.0s' {1..60})/$(printf 'f%.0s' {1..60})
mkdir -p "$long" && echo "print(1)" > "$long/kernel_with_a_long_name.py" && echo "x = 2" > src/a.py
ln -s a.py src/link.py
"${U[@]}" --source-code src > out.txt 2> err.txt || fail "upload src: $(cat err.txt)"
grep -q "^Stored 2 files from 'src' as $A (.* bytes); skipped links and special files" out.txt ||
	fail "upload line: $(cat out.txt)"
$PY - "$A" "${long#src/}/kernel_with_a_long_name.py" <<'PY' || fail "archive contents"
import sys, tarfile
t = tarfile.open(sys.argv[1])
names = sorted(t.getnames())
assert names == sorted(["a.py", sys.argv[2]]), names
assert t.extractfile(sys.argv[2]).read() == b"print(1)\n"
PY
cp "$A" before.tgz

# one cap, refused before reading where the sizes tell, nothing stored
truncate -s 1500M huge.bin
rss "${U[@]}" --source-code huge.bin
[ $RC -eq 1 ] || fail "a 1.5 GB file: not 1"
msg "'huge.bin' packs to 1500.0 MiB; a source archive may unpack to at most 64 MiB (nothing was stored)"
[ "$RSS" -lt 65536 ] || fail "refusing a 1.5 GB file took $RSS kB"
mkdir two && truncate -s 40M two/a.bin two/b.bin
"${U[@]}" --source-code two 2> err.txt; [ $? -eq 1 ] || fail "an 80 MiB directory: not 1"
msg "'two' packs to 80.0 MiB"
cmp -s "$A" before.tgz || fail "a refused upload changed the archive"
# an archive claiming more in its trailer, and a bomb that unpacks past the cap
head -c 100M /dev/zero | gzip -1 > bomb.tar.gz
"${U[@]}" --source-code bomb.tar.gz 2> err.txt; [ $? -eq 1 ] || fail "bomb: not 1"
msg "'bomb.tar.gz' unpacks to 100.0 MiB"
$PY -c "
import gzip, struct
d = gzip.compress(b'\0' * (70 << 20))
open('lying.tar.gz', 'wb').write(d[:-4] + struct.pack('<I', 1000))" || fail "lying archive"
"${U[@]}" --source-code lying.tar.gz 2> err.txt; [ $? -eq 1 ] || fail "lying trailer: not 1"
msg "'lying.tar.gz' unpacks to more than 64"
head -c $(($(stat -c %s before.tgz) - 10)) before.tgz > cut.tar.gz
"${U[@]}" --source-code cut.tar.gz 2> err.txt; [ $? -eq 1 ] || fail "a cut archive: not 1"
msg "'cut.tar.gz'"
cp afile fake.tgz
"${U[@]}" --source-code fake.tgz 2> err.txt; [ $? -eq 1 ] || fail "not gzip: not 1"
msg "'fake.tgz' is named like a .tar.gz but is not a gzip file"
cmp -s "$A" before.tgz || fail "a refused archive changed the stored one"
rm -f huge.bin bomb.tar.gz lying.tar.gz

# streamed: a 60 MiB file stays out of memory
mkdir big && head -c 60M /dev/urandom > big/blob.bin
rss "${U[@]}" --source-code big
[ $RC -eq 0 ] || fail "a 60 MiB upload: $(cat err.txt)"
[ "$RSS" -lt 65536 ] || fail "a 60 MiB upload took $RSS kB"
rss "${U[@]}" --source-code "$A"
[ $RC -eq 0 ] || fail "an archive as it is: $(cat err.txt)"
grep -q "^Stored '$A' as $A" out.txt || fail "as-is line: $(cat out.txt)"
[ "$RSS" -lt 65536 ] || fail "copying a 60 MiB archive took $RSS kB"
rm -rf big
ls -A dp/profiles/global | grep -q '\.tmp' && fail "temporary left: $(ls -A dp/profiles/global)"

# the README's order: view, upload, view: the archive stays
"${U[@]}" --source-code src > /dev/null || fail "upload src again"
cp "$A" mine.tgz
"${ING[@]}" > /dev/null || fail "re-ingest"
cmp -s "$A" mine.tgz || fail "the re-ingest dropped the uploaded source"

# an upload racing re-ingests: whatever the order, the last upload is in the profile
"$BIN" kernel gen matmul_v0 --size 2048 -o kb.neff -q && "$BIN" capture -n kb.neff -s kb.ntff -q ||
	fail "bigger capture"
for i in 1 2 3 4 5; do
	echo "round = $i" > src/round.py
	"$BIN" view -n kb.neff -s kb.ntff -q --data-path dp --display-name p --ingest-only > /dev/null &
	ing=$!
	sleep 0.$((i * 2))
	"${U[@]}" --source-code src > /dev/null 2> err.txt || fail "round $i upload: $(cat err.txt)"
	wait $ing || fail "round $i ingest"
	$PY -c "import sys, tarfile; assert tarfile.open('$A').extractfile('round.py').read() == b'round = $i\n'" ||
		fail "round $i: the upload was lost"
done
exit 0
