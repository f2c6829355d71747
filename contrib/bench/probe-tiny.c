/* The trivial function that contrib/bench/overhead.sh probes.  It is named like
 * a function of ingero-ftrace's CUDA catalog (cudaSetDevice: one argument, %di)
 * so that `record --cuda-lib libprobe-tiny.so` probes it exactly as it probes
 * libcudart.  Built with -O0 -fcf-protection=none (gcc drops the frame
 * pointer of a leaf at -O2 whatever the flags): its first instruction is
 * `push %rbp`, like libcudart 13's functions, which the kernel emulates. */
static int probe_tiny_calls;

int cudaSetDevice(int device)
{
	probe_tiny_calls++;
	return device < 0;
}
