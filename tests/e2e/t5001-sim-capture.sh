#!/bin/bash
# t5001-sim-capture.sh: `kernel gen` + `capture` on the command line: the seed
# workflow's file naming (--profile-nth-exec=2 -> profile_exec_2.ntff next to -s),
# DMA packets only with NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1, byte-identical captures,
# exit codes (2 usage, 1 failure) and error messages naming the file and the place.
set -u
BIN=${NX_BIN:?NX_BIN not set}
. "$(dirname "${BASH_SOURCE[0]}")/lib_e2e.sh"
e2e_setup t5001

"$BIN" kernel list > list.txt || fail "kernel list"
for k in matmul_v0 matmul_v1 matmul_v2 matmul_transpose softmax layernorm attention \
	 dma_tiny vector_bound serial_sem; do
	grep -q "^$k " list.txt || fail "kernel list lacks $k"
done
"$BIN" kernel gen matmul_v0 --size 512 --listing v0.txt -o v0.neff || fail "kernel gen"
grep -q '^@29 Tensor matmul' v0.txt || fail "listing lacks the matmul line"
"$BIN" kernel asm v0.txt -o v0b.neff || fail "kernel asm"
cmp -s v0.neff v0b.neff || fail "asm of the generated listing differs from gen"

NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n v0.neff -s out/profile.ntff \
	--profile-nth-exec=2 > cap.out 2> cap.log || fail "capture"
[ -s out/profile_exec_2.ntff ] || fail "no out/profile_exec_2.ntff"
[ ! -e out/profile.ntff ] || fail "profile.ntff written despite --profile-nth-exec"
# one line on stderr (README), nothing on stdout
[ "$(wc -l < cap.log)" = 1 ] || fail "capture printed $(wc -l < cap.log) lines: $(cat cap.log)"
grep -q "^capture: wrote out/profile_exec_2.ntff: v0.neff on trn2, 2 executions, profiled #2: [0-9]* instructions" \
	cap.log || fail "no summary line: $(cat cap.log)"
[ ! -s cap.out ] || fail "capture wrote to stdout"
NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n v0.neff -s again.ntff \
	--profile-nth-exec=2 > /dev/null || fail "second capture"
mv out/profile_exec_2.ntff first.ntff
NEURON_RT_ENABLE_DGE_NOTIFICATIONS=1 "$BIN" capture -n v0.neff -s out/x.ntff \
	--profile-nth-exec=2 > /dev/null || fail "third capture"
cmp -s first.ntff out/profile_exec_2.ntff || fail "captures of the same NEFF differ"
"$BIN" capture -n v0.neff -s nodge.ntff 2> nodge.log || fail "capture without DGE"
grep -q "(not recorded)" nodge.log || fail "DMA packets recorded without DGE notifications"
[ "$(stat -c %s nodge.ntff)" -lt "$(stat -c %s first.ntff)" ] || fail "no-DGE trace not smaller"
"$BIN" capture -n v0.neff -s trn1.ntff --target trn1 > /dev/null || fail "trn1 capture"

# usage errors exit 2, failures exit 1 with the file named
"$BIN" capture --target trn7 -n v0.neff > /dev/null 2>&1; [ $? -eq 2 ] || fail "bad --target not 2"
"$BIN" capture --num-exec x > /dev/null 2>&1; [ $? -eq 2 ] || fail "bad --num-exec not 2"
"$BIN" capture -n missing.neff -s m.ntff 2> err.txt; [ $? -eq 1 ] || fail "missing NEFF not 1"
grep -q "missing.neff" err.txt || fail "missing NEFF not named"
"$BIN" kernel gen nosuch -o x.neff 2> /dev/null; [ $? -eq 2 ] || fail "unknown kernel not 2"
"$BIN" capture --help | grep -q "profile-nth-exec" || fail "capture --help"
"$BIN" kernel gen --help | grep -q -- "--size" || fail "kernel gen --help"

# a deadlocked listing names the instruction and its source line
cat > dead.txt <<'LST'
kernel dead
source kernels/dead.py
tensor x input bf16 128x512
queue qSyncIO0 in Sync sem=1
block b0 qSyncIO0
  desc x[0:128, 0:512] -> sbuf[0:128]+0
@10 Sync dma_trigger block=b0
@12 Vector tensor_copy src=sbuf[0:128]+0:bf16[512] dst=sbuf[0:128]+4096:bf16[512] wait=S[1]>=17
LST
"$BIN" kernel asm dead.txt -o dead.neff || fail "asm dead"
timeout 20 "$BIN" capture -n dead.neff -s dead.ntff 2> err.txt; [ $? -eq 1 ] || fail "deadlock not 1"
grep -q "deadlock.*Vector instruction 0 (TENSOR_COPY) at kernels/dead.py:12" err.txt ||
	fail "deadlock message: $(cat err.txt)"
[ ! -e dead.ntff ] || fail "trace left behind after a failed capture"
sed 's/tensor_copy/tensor_frob/' dead.txt > bad.txt
"$BIN" kernel asm bad.txt -o bad.neff 2> err.txt; [ $? -eq 1 ] || fail "bad opcode not 1"
grep -q "bad.txt:8: unknown opcode 'tensor_frob'" err.txt || fail "bad opcode message"
exit 0
