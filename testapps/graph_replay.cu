// graph_replay: a CUDA graph of K kernel nodes, captured from a stream and
// replayed R times, plus one kernel launched directly. Truth: K * R graph
// kernels, one direct kernel.
#include "testapps/common/testapp.h"

__global__ void graph_kernel(float* data, int n) {
  ct::ForElement(n, [=](int i) { data[i] = data[i] * 0.5f + 1.0f; });
}

__global__ void direct_kernel(float* data, int n) {
  ct::ForElement(n, [=](int i) { data[i] = 0.0f; });
}

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "graph_replay", "a CUDA graph of K kernel nodes replayed R times");
  const long nodes = args.Int("nodes", 8, "kernel nodes in the graph (K)", 1);
  const long replays = args.Int("replays", 10, "graph launches (R)", 1);
  const std::string truth_path = args.Finish({"graph_kernel(float*, int)", "direct_kernel(float*, int)"});

  constexpr int kN = 1 << 16;
  float* data = nullptr;
  CT_CHECK(cudaMalloc(&data, kN * sizeof(float)));
  cudaStream_t stream;
  CT_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  direct_kernel<<<kN / 256, 256, 0, stream>>>(data, kN);
  CT_CHECK_LAUNCH();
  CT_CHECK(cudaStreamSynchronize(stream));

  cudaGraph_t graph;
  CT_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (long i = 0; i < nodes; ++i) graph_kernel<<<kN / 256, 256, 0, stream>>>(data, kN);
  CT_CHECK_LAUNCH();
  CT_CHECK(cudaStreamEndCapture(stream, &graph));
  size_t node_count = 0;
  CT_CHECK(cudaGraphGetNodes(graph, nullptr, &node_count));
  if (node_count != static_cast<size_t>(nodes)) ct::Fail("captured graph has the wrong node count");
  cudaGraphExec_t exec;
  CT_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (long r = 0; r < replays; ++r) CT_CHECK(cudaGraphLaunch(exec, stream));
  CT_CHECK(cudaStreamSynchronize(stream));

  ct::Truth truth("graph_replay");
  truth.Kernels("graph_kernel(float*, int)", nodes * replays);
  truth.Kernels("direct_kernel(float*, int)", 1);
  truth["graph"] = {{"nodes", nodes}, {"replays", replays}, {"graph_kernels", nodes * replays}};
  truth.Write(truth_path);

  CT_CHECK(cudaGraphExecDestroy(exec));
  CT_CHECK(cudaGraphDestroy(graph));
  CT_CHECK(cudaStreamDestroy(stream));
  CT_CHECK(cudaFree(data));
  ct::Say("graph_replay: %ld nodes x %ld replays\n", nodes, replays);
  return 0;
}
