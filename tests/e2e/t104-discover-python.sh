# discover asks a Python command's interpreter for its sys.path and finds the
# CUDA runtime of pip wheels there (nvidia/*/lib, torch/lib with a hashed
# name), also for a script whose #! leads to Python; and conda environments.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$IFT_SRC/tests/e2e/discover-lib.sh"
unset LD_LIBRARY_PATH CONDA_PREFIX

command -v python3 >/dev/null 2>&1 || skip "needs python3"
python3 -c 'import sys' 2>/dev/null || skip "python3 does not run"

fake_cudart "$PWD/build" 1
mkdir -p site/nvidia/cuda_runtime/lib site/torch/lib site/nvidia/cu13/lib
cp build/libcudart.so.12 site/nvidia/cuda_runtime/lib/libcudart.so.12
cp build/libcudart.so.12 site/torch/lib/libcudart-abc123.so.12
ln -s libcudart.so.12 site/nvidia/cuda_runtime/lib/libcudart.so
# not a CUDA runtime: must not be listed
cp build/libcudart.so.12 site/torch/lib/libcudnn.so.9

PYTHONPATH="$PWD/site" discover -- python3 -c 'print(1)'
expect_lib site/nvidia/cuda_runtime/lib/libcudart.so.12 python 5
expect_lib site/torch/lib/libcudart-abc123.so.12 python 5
expect_no_lib site/torch/lib/libcudnn.so.9
[ "$(grep -c "^$PWD/site/" discover.out)" = 2 ] || fail "expected 2 libraries under site/: $(cat discover.out)"

# without the PYTHONPATH the wheels are not on sys.path
discover -- python3
expect_no_lib site/torch/lib/libcudart-abc123.so.12

# a script whose #! runs Python through env
printf '#!/usr/bin/env python3\nprint("hello")\n' >train.py
chmod +x train.py
PYTHONPATH="$PWD/site" discover -- ./train.py
expect_lib site/torch/lib/libcudart-abc123.so.12 python 5

# an interpreter that hangs costs at most its deadline (5 s), and is killed
mkdir -p hang
marker="99$$"	# a sleep no one else runs
printf '#!/bin/sh\nexec sleep %s\n' "$marker" >hang/python3
chmod +x hang/python3
start=$(date +%s)
PATH="$PWD/hang:$PATH" discover -- python3
[ $(( $(date +%s) - start )) -le 8 ] || fail "a hanging interpreter held discover too long"
if command -v pgrep >/dev/null; then
	pgrep -x -f "sleep $marker" >/dev/null && fail "the hung interpreter is still running"
fi

# conda: $CONDA_PREFIX/lib
mkdir -p conda/lib conda/conda-meta
cp build/libcudart.so.12 conda/lib/libcudart.so.12
CONDA_PREFIX="$PWD/conda" discover -- /bin/true
expect_lib conda/lib/libcudart.so.12 conda 5
exit 0
