"""A Kineto trace with PyTorch's long kernel names, two of which share a
short name (`at::native::vectorized_elementwise_kernel<…>(…)`), for the CLI
tests of tables and OpenMetrics labels."""
import json

ELLIPSIS = "\u2026"

ADD = ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
       "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
       "at::detail::Array<char*, 3>)")
MUL = ("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, "
       "float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, "
       "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> "
       ">, at::detail::Array<char*, 3>)")
LAMBDA = ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<"
          "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor"
          "<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, "
          "at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, "
          "at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, "
          "at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, "
          "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor"
          "<float> > const&)::{lambda(int)#1})")
SHORT = "at::native::vectorized_elementwise_kernel<" + ELLIPSIS + ">(" + ELLIPSIS + ")"
LAMBDA_SHORT = "at::native::elementwise_kernel<" + ELLIPSIS + ">(" + ELLIPSIS + ")"



def tag(full):
    """The 16 hex digits of the FNV-1a 64 hash of `full`, written here
    independently of collector/short_name.cc."""
    h = 14695981039346656037
    for b in full.encode():
        h = ((h ^ b) * 1099511628211) % (1 << 64)
    return "%016x" % h


def long_names_kineto(path, scale=1.0):
    """Three launches of each kernel on one stream, 5 us apart, each launched
    by a cudaLaunchKernel 3 us before it starts; kernel durations times `scale`."""
    events = [{"name": "process_name", "ph": "M", "ts": 0, "pid": 1, "tid": 0,
               "args": {"name": "python3"}}]
    ts, correlation = 1000.0, 100
    for _ in range(3):
        for name, dur in ((ADD, 7.0 * scale), (MUL, 11.0 * scale), (LAMBDA, 13.0 * scale)):
            correlation += 1
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "pid": 1, "tid": 1, "ts": ts - 3, "dur": 2,
                           "args": {"correlation": correlation}})
            events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                           "ts": ts, "dur": dur,
                           "args": {"device": 0, "stream": 7, "correlation": correlation,
                                    "grid": [64, 1, 1], "block": [128, 1, 1]}})
            ts += dur + 5
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": events}, f)
