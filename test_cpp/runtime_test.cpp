// Tests of the PJRT runtime layer against the CPU plugin. One process holds one client, so
// a global environment configures it (3 CPU devices through $CPU_NUM_DEVICES) before any
// test and shuts it down after all of them.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/client.h"
#include "runtime/compile_options.h"
#include "runtime/device_dims.h"
#include "host/host_kernel.h"
#include "host/pass_through_kernel.h"
#include "runtime/plugin_discovery.h"
#include "runtime/plugin_loader.h"

namespace torch_xla::runtime {
namespace {
using host::HostBuffer;
using host::HostKernelCall;
using host::HostKernelHandler;
using host::HostParallel;
using host::kPassThroughTarget;
using host::PassThroughKernelAvailable;
using host::RegisterHostKernel;

constexpr int kDevices = 3;

class RuntimeEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    unsetenv("PJRT_DEVICE");
    unsetenv("PJRT_PLUGIN_PATH");
    // Differs from the default of 4, so the test proves the variable is read.
    setenv("CPU_NUM_DEVICES", std::to_string(kDevices).c_str(), 1);
    // Replicas that would wait for each other forever fail the test instead.
    setenv("XLA_REPLICA_TIMEOUT", "30", 0);
    Client::Configure(ClientOptions{});
  }

  void TearDown() override {
    // Objects outliving the client must be released without touching it.
    float value = 1.0f;
    BufferPtr survivor = Client::Get().TransferToDevice(&value, ElementType::kF32, {}, 0);
    Client::Shutdown();
    Client::Shutdown();  // idempotent
    EXPECT_FALSE(Client::IsCreated());
    EXPECT_THROW(Client::Get(), RuntimeError);
    EXPECT_THROW(survivor->Await(), RuntimeError);
  }
};

const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new RuntimeEnvironment);

template <typename T>
std::vector<T> Read(const Buffer& buffer) {
  std::vector<T> values(buffer.element_count());
  Client::Get().TransferFromDevice(buffer, values.data(), values.size() * sizeof(T));
  return values;
}

template <typename T>
BufferPtr Upload(const std::vector<T>& values, ElementType type, std::vector<int64_t> dims,
                 int device = 0) {
  return Client::Get().TransferToDevice(values.data(), type, dims, device);
}

// (a + b) · b for 2x2 f32 matrices.
const char* const kAddDot = R"(
module @add_dot {
  func.func public @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %0 = stablehlo.add %a, %b : tensor<2x2xf32>
    %1 = stablehlo.dot_general %0, %b, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    return %1 : tensor<2x2xf32>
  }
})";

// Two results of different types: x * 2 and the i32 sum of y.
const char* const kTwoOutputs = R"(
module @two_outputs {
  func.func public @main(%x: tensor<3xf32>, %y: tensor<4xi32>) -> (tensor<3xf32>, tensor<i32>) {
    %0 = stablehlo.add %x, %x : tensor<3xf32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.reduce(%y init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4xi32>, tensor<i32>) -> tensor<i32>
    return %0, %1 : tensor<3xf32>, tensor<i32>
  }
})";

std::string AllReduceModule(int replicas) {
  std::string group;
  for (int r = 0; r < replicas; ++r) group += (r ? ", " : "") + std::to_string(r);
  return R"(
module @all_reduce attributes {mhlo.num_replicas = )" +
         std::to_string(replicas) + R"( : i32, mhlo.num_partitions = 1 : i32} {
  func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "stablehlo.all_reduce"(%a) ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %s = stablehlo.add %x, %y : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[)" +
         group + "]]> : tensor<1x" + std::to_string(replicas) + R"(xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})";
}

TEST(ElementTypeTest, SizesNamesAndClasses) {
  EXPECT_EQ(ElementSize(ElementType::kPred), 1u);
  EXPECT_EQ(ElementSize(ElementType::kBF16), 2u);
  EXPECT_EQ(ElementSize(ElementType::kS32), 4u);
  EXPECT_EQ(ElementSize(ElementType::kC64), 8u);
  EXPECT_EQ(ElementSize(ElementType::kC128), 16u);
  EXPECT_EQ(MlirTypeName(ElementType::kPred), "i1");
  EXPECT_EQ(MlirTypeName(ElementType::kU16), "ui16");
  EXPECT_EQ(MlirTypeName(ElementType::kBF16), "bf16");
  EXPECT_EQ(MlirTypeName(ElementType::kC128), "complex<f64>");
  EXPECT_TRUE(IsFloating(ElementType::kF16));
  EXPECT_FALSE(IsFloating(ElementType::kC64));
  EXPECT_TRUE(IsComplex(ElementType::kC64));
  EXPECT_TRUE(IsUnsigned(ElementType::kU8));
  EXPECT_FALSE(IsUnsigned(ElementType::kS8));
  EXPECT_FALSE(IsUnsigned(ElementType::kPred));
}

TEST(CompileOptionsTest, EncodesReplicasAsVarints) {
  EXPECT_EQ(internal::SerializeCompileOptions(1, 1, false),
            std::string("\x1a\x04\x20\x01\x28\x01", 6));
  EXPECT_EQ(internal::SerializeCompileOptions(1, 1, true),
            std::string("\x1a\x04\x20\x01\x28\x01\x20\x01", 8));
  // 300 needs two varint bytes (0xac 0x02), so the length prefix grows to 5.
  EXPECT_EQ(internal::SerializeCompileOptions(300, 1, false),
            std::string("\x1a\x05\x20\xac\x02\x28\x01", 7));
}

TEST(ClientTest, CreatesCpuClientWithConfiguredDeviceCount) {
  Client& client = Client::Get();
  EXPECT_TRUE(Client::IsCreated());
  EXPECT_EQ(&client, &Client::Get());
  EXPECT_EQ(client.device_kind(), "CPU");
  EXPECT_EQ(client.platform_name(), "cpu");
  EXPECT_EQ(client.device_count(), kDevices);
  EXPECT_EQ(client.plugin_path(), TORCH_XLA_DEFAULT_CPU_PLUGIN);
  EXPECT_NE(client.api(), nullptr);
  EXPECT_THROW(Client::Configure(ClientOptions{}), RuntimeError);
}

TEST(ClientTest, GetIsSafeFromSeveralThreads) {
  std::vector<std::thread> threads;
  std::vector<Client*> seen(8, nullptr);
  for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] { seen[t] = &Client::Get(); });
  for (auto& thread : threads) thread.join();
  for (Client* client : seen) EXPECT_EQ(client, &Client::Get());
}

TEST(TransferTest, RoundTripsF32AndI32) {
  std::vector<float> floats = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 1e-3f};
  BufferPtr f = Upload(floats, ElementType::kF32, {2, 3});
  EXPECT_EQ(f->type(), ElementType::kF32);
  EXPECT_EQ(f->dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f->byte_size(), 24u);
  f->Await();
  EXPECT_EQ(Read<float>(*f), floats);

  std::vector<int32_t> ints = {1, -2, 2147483647, -2147483647 - 1};
  BufferPtr i = Upload(ints, ElementType::kS32, {4}, /*device=*/2);
  EXPECT_EQ(i->device(), 2);
  EXPECT_EQ(Read<int32_t>(*i), ints);
}

TEST(TransferTest, RoundTripsScalarAndEmpty) {
  std::vector<double> scalar = {3.5};
  EXPECT_EQ(Read<double>(*Upload(scalar, ElementType::kF64, {})), scalar);
  BufferPtr empty = Client::Get().TransferToDevice(nullptr, ElementType::kF32, {0, 5}, 0);
  EXPECT_EQ(empty->byte_size(), 0u);
}

TEST(TransferTest, RejectsBadArguments) {
  Client& client = Client::Get();
  std::vector<float> values(4, 1.0f);
  EXPECT_THROW(client.TransferToDevice(values.data(), ElementType::kF32, {4}, kDevices),
               RuntimeError);
  EXPECT_THROW(client.TransferToDevice(values.data(), ElementType::kF32, {-1}, 0), RuntimeError);
  EXPECT_THROW(client.TransferToDevice(nullptr, ElementType::kF32, {4}, 0), RuntimeError);
  BufferPtr buffer = Upload(values, ElementType::kF32, {4});
  std::vector<float> small(3);
  try {
    client.TransferFromDevice(*buffer, small.data(), small.size() * sizeof(float));
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& error) {
    EXPECT_NE(std::string(error.what()).find("16"), std::string::npos) << error.what();
  }
}

TEST(DeviceDimsTest, FlattensFloatArraysWithAShortLastDimension) {
  EXPECT_EQ(DeviceDims(ElementType::kF32, {512, 512, 3, 3}), (std::vector<int64_t>{2359296}));
  EXPECT_EQ(DeviceDims(ElementType::kBF16, {64, 3, 7, 7}), (std::vector<int64_t>{9408}));
  EXPECT_EQ(DeviceDims(ElementType::kF64, {4096, 1}), (std::vector<int64_t>{4096}));
  // Long last dimensions, too few elements, one dimension, integers, complex: unchanged.
  EXPECT_EQ(DeviceDims(ElementType::kF32, {512, 256, 16}), (std::vector<int64_t>{512, 256, 16}));
  EXPECT_EQ(DeviceDims(ElementType::kF32, {32, 1, 3, 3}), (std::vector<int64_t>{32, 1, 3, 3}));
  EXPECT_EQ(DeviceDims(ElementType::kF32, {8192}), (std::vector<int64_t>{8192}));
  EXPECT_EQ(DeviceDims(ElementType::kS64, {4096, 3}), (std::vector<int64_t>{4096, 3}));
  EXPECT_EQ(DeviceDims(ElementType::kC64, {4096, 3}), (std::vector<int64_t>{4096, 3}));
  EXPECT_EQ(DeviceDims(ElementType::kF32, {0, 3}), (std::vector<int64_t>{0, 3}));
}

// A buffer held flat on the device keeps its tensor's dims; an executable taking and
// returning the flat form gives outputs with the dims the caller names.
TEST(DeviceDimsTest, FlatBuffersRoundTripAndOutputsTakeTheGivenDims) {
  Client& client = Client::Get();
  const std::vector<int64_t> dims = {64, 32, 3};
  std::vector<float> values(64 * 32 * 3);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  BufferPtr x = Upload(values, ElementType::kF32, dims);
  EXPECT_EQ(x->dims(), dims);
  EXPECT_EQ(Read<float>(*x), values);
  ExecutablePtr exe = client.Compile(R"(
module @double_flat {
  func.func public @main(%x: tensor<6144xf32>) -> tensor<6144xf32> {
    %0 = stablehlo.add %x, %x : tensor<6144xf32>
    return %0 : tensor<6144xf32>
  }
})");
  auto outputs = client.Execute(*exe, {{x.get()}}, {0}, {}, {}, {dims});
  EXPECT_EQ(outputs[0][0]->dims(), dims);
  std::vector<float> doubled = values;
  for (float& v : doubled) v *= 2;
  EXPECT_EQ(Read<float>(*outputs[0][0]), doubled);
  // Dims whose device form is not the output's are refused.
  EXPECT_THROW(client.Execute(*exe, {{x.get()}}, {0}, {}, {}, {{64, 96}}), RuntimeError);
  EXPECT_THROW(client.Execute(*exe, {{x.get()}}, {0}, {}, {}, {dims, dims}), RuntimeError);
}

TEST(ExecuteTest, CompilesAndRunsAddDot) {
  Client& client = Client::Get();
  ExecutablePtr exe = client.Compile(kAddDot);
  EXPECT_EQ(exe->num_replicas(), 1);
  EXPECT_EQ(exe->num_outputs(), 1u);
  BufferPtr a = Upload<float>({1, 2, 3, 4}, ElementType::kF32, {2, 2});
  BufferPtr b = Upload<float>({1, 0, 0, 2}, ElementType::kF32, {2, 2});
  auto outputs = client.Execute(*exe, {{a.get(), b.get()}}, {0});
  ASSERT_EQ(outputs.size(), 1u);
  ASSERT_EQ(outputs[0].size(), 1u);
  const Buffer& out = *outputs[0][0];
  EXPECT_EQ(out.type(), ElementType::kF32);
  EXPECT_EQ(out.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(out.device(), 0);
  // a + b = [[2, 2], [3, 6]]; times diag(1, 2) = [[2, 4], [3, 12]].
  EXPECT_EQ(Read<float>(out), (std::vector<float>{2, 4, 3, 12}));
  // Inputs not donated stay usable.
  EXPECT_EQ(Read<float>(*a), (std::vector<float>{1, 2, 3, 4}));
}

TEST(ExecuteTest, RunsOnDeviceOtherThanZeroWithSeveralOutputs) {
  Client& client = Client::Get();
  ExecutablePtr exe = client.Compile(kTwoOutputs);
  ASSERT_EQ(exe->num_outputs(), 2u);
  for (int device = 1; device < kDevices; ++device) {
    BufferPtr x = Upload<float>({1, 2, 3}, ElementType::kF32, {3}, device);
    BufferPtr y = Upload<int32_t>({10, 20, 30, 40}, ElementType::kS32, {4}, device);
    auto outputs = client.Execute(*exe, {{x.get(), y.get()}}, {device});
    ASSERT_EQ(outputs[0].size(), 2u);
    EXPECT_EQ(outputs[0][0]->device(), device);
    EXPECT_EQ(Read<float>(*outputs[0][0]), (std::vector<float>{2, 4, 6}));
    EXPECT_EQ(outputs[0][1]->type(), ElementType::kS32);
    EXPECT_TRUE(outputs[0][1]->dims().empty());
    EXPECT_EQ(Read<int32_t>(*outputs[0][1]), (std::vector<int32_t>{100}));
  }
}

TEST(ExecuteTest, ReplicatedAllReduce) {
  Client& client = Client::Get();
  ExecutablePtr exe = client.Compile(AllReduceModule(kDevices), kDevices);
  EXPECT_EQ(exe->num_replicas(), kDevices);
  std::vector<BufferPtr> inputs;
  std::vector<std::vector<Buffer*>> arguments;
  std::vector<int> devices;
  for (int r = 0; r < kDevices; ++r) {
    inputs.push_back(Upload<float>({10.0f * r, 10.0f * r + 1, 10.0f * r + 2, 10.0f * r + 3},
                                   ElementType::kF32, {4}, r));
    arguments.push_back({inputs.back().get()});
    devices.push_back(r);
  }
  auto outputs = client.Execute(*exe, arguments, devices);
  ASSERT_EQ(outputs.size(), static_cast<std::size_t>(kDevices));
  // Sum over r of (10r + i) for r = 0..2 is 30 + 3i.
  for (int r = 0; r < kDevices; ++r) {
    EXPECT_EQ(outputs[r][0]->device(), r);
    EXPECT_EQ(Read<float>(*outputs[r][0]), (std::vector<float>{30, 33, 36, 39}));
  }
}

TEST(ExecuteTest, RejectsMismatchedArguments) {
  Client& client = Client::Get();
  ExecutablePtr exe = client.Compile(kAddDot);
  BufferPtr a = Upload<float>({1, 2, 3, 4}, ElementType::kF32, {2, 2}, 0);
  BufferPtr b = Upload<float>({1, 2, 3, 4}, ElementType::kF32, {2, 2}, 1);
  EXPECT_THROW(client.Execute(*exe, {{a.get(), b.get()}}, {0}), RuntimeError);  // b on device 1
  EXPECT_THROW(client.Execute(*exe, {{a.get(), a.get()}}, {0, 1}), RuntimeError);
  EXPECT_THROW(client.Execute(*exe, {{a.get(), a.get()}}, {0}, {2}), RuntimeError);
  ExecutablePtr replicated = client.Compile(AllReduceModule(2), 2);
  BufferPtr v0 = Upload<float>({1, 2, 3, 4}, ElementType::kF32, {4}, 0);
  BufferPtr v2 = Upload<float>({1, 2, 3, 4}, ElementType::kF32, {4}, 2);
  // Replica 1 is assigned to device 1 at compile time.
  EXPECT_THROW(client.Execute(*replicated, {{v0.get()}, {v2.get()}}, {0, 2}), RuntimeError);
  EXPECT_THROW(client.Compile(kAddDot, kDevices + 1), RuntimeError);
}

TEST(ExecuteTest, DonatedInputIsAccepted) {
  Client& client = Client::Get();
  ExecutablePtr exe = client.Compile(kAddDot);
  BufferPtr a = Upload<float>({1, 2, 3, 4}, ElementType::kF32, {2, 2});
  BufferPtr b = Upload<float>({1, 0, 0, 1}, ElementType::kF32, {2, 2});
  auto outputs = client.Execute(*exe, {{a.get(), b.get()}}, {0}, /*donated=*/{0});
  EXPECT_EQ(Read<float>(*outputs[0][0]), (std::vector<float>{2, 2, 3, 5}));
  EXPECT_EQ(Read<float>(*b), (std::vector<float>{1, 0, 0, 1}));
}

TEST(ExecuteTest, HandedOverInputsLiveUntilTheExecutionIsAwaited) {
  Client& client = Client::Get();
  ExecutablePtr exe = client.Compile(kAddDot);
  BufferPtr a = Upload<float>({1, 2, 3, 4}, ElementType::kF32, {2, 2});
  BufferPtr b = Upload<float>({1, 0, 0, 2}, ElementType::kF32, {2, 2});
  std::weak_ptr<Buffer> watch_a = a, watch_b = b;
  std::vector<Buffer*> args = {a.get(), b.get()};
  std::vector<BufferPtr> handed_over = {std::move(a), std::move(b)};
  auto outputs = client.Execute(*exe, {args}, {0}, {}, std::move(handed_over));
  // The caller holds no reference any more; the runtime keeps both inputs until it has
  // seen the execution finish (at a later Execute or at WaitAll), however fast it ran.
  EXPECT_FALSE(watch_a.expired());
  EXPECT_FALSE(watch_b.expired());
  client.WaitAll();
  EXPECT_TRUE(watch_a.expired());
  EXPECT_TRUE(watch_b.expired());
  EXPECT_EQ(Read<float>(*outputs[0][0]), (std::vector<float>{2, 4, 3, 12}));
}

TEST(ExecuteTest, AwaitedLaunchesCountAsCompleted) {
  Client& client = Client::Get();
  ExecutablePtr exe = client.Compile(kAddDot);
  BufferPtr a = Upload<float>({1, 2, 3, 4}, ElementType::kF32, {2, 2});
  client.WaitAll();  // every earlier launch awaited: the mark is the last launch's number
  const uint64_t before = Client::LaunchesCompletedThrough();
  std::vector<BufferPtr> outputs;
  for (int i = 0; i < 3; ++i) outputs.push_back(client.Execute(*exe, {{a.get(), a.get()}}, {0})[0][0]);
  // Launches not yet awaited are never counted ahead of the awaiting.
  EXPECT_LE(Client::LaunchesCompletedThrough(), before + 3);
  client.WaitAll();
  EXPECT_EQ(Client::LaunchesCompletedThrough(), before + 3);
  // (a + a) @ a for a = (1, 2; 3, 4): 2 * (7, 10; 15, 22).
  EXPECT_EQ(Read<float>(*outputs.back()), (std::vector<float>{14, 20, 30, 44}));
}

TEST(ExecuteTest, CompileErrorCarriesPluginMessage) {
  Client& client = Client::Get();
  try {
    client.Compile("module { func.func @main() -> tensor<f32> { this is not mlir } }");
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& error) {
    std::string message = error.what();
    EXPECT_EQ(message.rfind("PJRT_Client_Compile: ", 0), 0u) << message;
    EXPECT_GT(message.size(), std::string("PJRT_Client_Compile: ").size() + 10) << message;
  }
  // The process and client survive.
  EXPECT_EQ(client.Compile(kAddDot)->num_outputs(), 1u);
}

TEST(ExecuteTest, WaitAllAwaitsConcurrentExecutions) {
  Client& client = Client::Get();
  ExecutablePtr exe = client.Compile(kAddDot);
  std::vector<std::vector<BufferPtr>> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      int device = t % kDevices;
      BufferPtr a = Upload<float>({1, 2, 3, 4}, ElementType::kF32, {2, 2}, device);
      BufferPtr b = Upload<float>({1, 0, 0, 1}, ElementType::kF32, {2, 2}, device);
      for (int i = 0; i < 20; ++i) {
        results[t].push_back(client.Execute(*exe, {{a.get(), b.get()}}, {device})[0][0]);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  client.WaitAll();
  client.WaitAll();  // nothing pending: returns at once
  for (const auto& list : results) {
    ASSERT_EQ(list.size(), 20u);
    list.back()->Await();
    EXPECT_EQ(Read<float>(*list.back()), (std::vector<float>{2, 2, 3, 5}));
  }
}

TEST(MemoryTest, ReportsHostMemoryForCpu) {
  Client& client = Client::Get();
  for (int device = 0; device < kDevices; ++device) {
    MemoryInfo info = client.GetMemoryInfo(device);
    EXPECT_GT(info.bytes_limit, 0);
    EXPECT_GE(info.bytes_in_use, 0);
    EXPECT_LE(info.bytes_in_use, info.bytes_limit);
  }
  EXPECT_THROW(client.GetMemoryInfo(kDevices), RuntimeError);
}

TEST(PluginLoaderTest, MissingLibraryNamesPath) {
  const std::string path = "/nonexistent/dir/libno_such_pjrt_plugin.so";
  try {
    LoadPjrtPlugin(path);
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& error) {
    std::string message = error.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("No such file"), std::string::npos) << message;  // dlerror()
  }
}

TEST(PluginLoaderTest, LibraryWithoutGetPjrtApiIsRejected) {
  try {
    LoadPjrtPlugin("libm.so.6");
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& error) {
    EXPECT_NE(std::string(error.what()).find("GetPjrtApi"), std::string::npos) << error.what();
  }
}

TEST(PluginLoaderTest, LoadingTwiceGivesTheSameApi) {
  EXPECT_EQ(LoadPjrtPlugin(TORCH_XLA_DEFAULT_CPU_PLUGIN), Client::Get().api());
}

TEST(PluginDiscoveryTest, DefaultsToCpuAndBuildTimePlugin) {
  internal::PluginChoice choice = internal::ResolvePlugin(ClientOptions{});
  EXPECT_EQ(choice.device_kind, "CPU");
  EXPECT_EQ(choice.path, TORCH_XLA_DEFAULT_CPU_PLUGIN);
}

TEST(PluginDiscoveryTest, UnknownKindListsKnownOnes) {
  ClientOptions options;
  options.device_kind = "quantum";
  try {
    internal::ResolvePlugin(options);
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("QUANTUM"), std::string::npos) << message;
    EXPECT_NE(message.find("CPU, CUDA, TPU"), std::string::npos) << message;
  }
  options.plugin_path = "/opt/quantum/pjrt.so";
  EXPECT_EQ(internal::ResolvePlugin(options).path, "/opt/quantum/pjrt.so");
}

TEST(PluginDiscoveryTest, KindWithoutPluginNamesWhatWasSearched) {
  ClientOptions options;
  options.device_kind = "tpu";
  try {
    internal::ResolvePlugin(options);
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("TPU"), std::string::npos) << message;
    EXPECT_NE(message.find("PJRT_PLUGIN_PATH"), std::string::npos) << message;
    EXPECT_NE(message.find("ClientOptions.plugin_path"), std::string::npos) << message;
  }
}

TEST(PluginDiscoveryTest, PriorityOfPathSources) {
  Client::SetDefaultPluginPath("cuda", "/registered/xla_cuda_plugin.so");
  ClientOptions options;
  options.device_kind = "CUDA";
  EXPECT_EQ(internal::ResolvePlugin(options).path, "/registered/xla_cuda_plugin.so");
  setenv("PJRT_PLUGIN_PATH", "/env/plugin.so", 1);
  EXPECT_EQ(internal::ResolvePlugin(options).path, "/env/plugin.so");
  options.plugin_path = "/explicit/plugin.so";
  EXPECT_EQ(internal::ResolvePlugin(options).path, "/explicit/plugin.so");
  unsetenv("PJRT_PLUGIN_PATH");
  setenv("PJRT_DEVICE", "cuda", 1);
  internal::PluginChoice choice = internal::ResolvePlugin(ClientOptions{});
  EXPECT_EQ(choice.device_kind, "CUDA");
  EXPECT_EQ(choice.path, "/registered/xla_cuda_plugin.so");
  unsetenv("PJRT_DEVICE");
}

// out = operand * config[0] + config[1], elementwise over f32.
void ScaleShift(const HostKernelCall& call) {
  if (call.operands.size() != 1 || call.results.size() != 1 || call.config.size() != 2)
    throw std::invalid_argument("ScaleShift: bad call");
  const HostBuffer& in = call.operands[0];
  const HostBuffer& out = call.results[0];
  if (in.type != ElementType::kF32 || out.dims != in.dims) throw std::invalid_argument("ScaleShift: bad buffers");
  int64_t n = 1;
  for (int64_t d : in.dims) n *= d;
  for (int64_t i = 0; i < n; ++i)
    static_cast<float*>(out.data)[i] = static_cast<const float*>(in.data)[i] * call.config[0] + call.config[1];
}

void Refuse(const HostKernelCall& call) {
  throw std::runtime_error("Refuse: operand of " + std::to_string(call.operands.at(0).dims.size()) + " dims");
}

std::string HostCallModule(const std::string& target) {
  return R"(
module @host_call {
  func.func public @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = "stablehlo.custom_call"(%a) {call_target_name = ")" +
         target + R"(", api_version = 4 : i32, backend_config = {config = array<i64: 3, -1>}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = "stablehlo.add"(%0, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
}
)";
}

TEST(HostKernelTest, GraphCallsRegisteredKernelWithBuffersAndConfig) {
  Client& client = Client::Get();
  RegisterHostKernel(client.api(), "test_scale_shift", HostKernelHandler<ScaleShift>);
  ExecutablePtr exe = client.Compile(HostCallModule("test_scale_shift"));
  BufferPtr a = Upload<float>({1, 2, 3, 4, 5, 6}, ElementType::kF32, {2, 3});
  auto outputs = client.Execute(*exe, {{a.get()}}, {0});
  // (a * 3 - 1) + a
  EXPECT_EQ(Read<float>(*outputs[0][0]), (std::vector<float>{3, 7, 11, 15, 19, 23}));
}

// Registers `kernel` as `target`, runs HostCallModule(target) and expects the execution
// to fail with an error containing `message`.
void ExpectHostCallFails(const std::string& target, XLA_FFI_Error* (*kernel)(XLA_FFI_CallFrame*),
                         const std::string& message) {
  Client& client = Client::Get();
  RegisterHostKernel(client.api(), target, kernel);
  ExecutablePtr exe = client.Compile(HostCallModule(target));
  BufferPtr a = Upload<float>({1, 2, 3, 4, 5, 6}, ElementType::kF32, {2, 3});
  try {
    auto outputs = client.Execute(*exe, {{a.get()}}, {0});
    outputs[0][0]->Await();
    FAIL() << "the execution did not fail";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(HostKernelTest, KernelExceptionFailsTheExecutionWithItsMessage) {
  ExpectHostCallFails("test_refuse", HostKernelHandler<Refuse>, "Refuse: operand of 2 dims");
  Client& client = Client::Get();
  // The client still works.
  ExecutablePtr ok = client.Compile(kAddDot);
  BufferPtr b = Upload<float>({1, 0, 0, 2}, ElementType::kF32, {2, 2});
  EXPECT_EQ(Read<float>(*client.Execute(*ok, {{b.get(), b.get()}}, {0})[0][0]), (std::vector<float>{2, 0, 0, 8}));
}

TEST(HostKernelTest, CompileOfAnUnregisteredTargetFails) {
  EXPECT_THROW(Client::Get().Compile(HostCallModule("test_never_registered")), RuntimeError);
}

// ---- HostParallel: a kernel's parts on the graph's compute threads ----

constexpr int kParts = 8;
std::array<std::atomic<int>, kParts> g_part_runs;
std::mutex g_part_mutex;
std::set<std::thread::id> g_part_threads;  // guarded by g_part_mutex
std::atomic<int64_t> g_thread_count{0};

// out = operand, computed in kParts parts that each record their thread and take a
// while, so that idle pool threads get to claim some.
void CopyInParts(const HostKernelCall& call) {
  const HostBuffer& in = call.operands.at(0);
  const HostBuffer& out = call.results.at(0);
  g_thread_count = call.parallel.thread_count();
  call.parallel.For(kParts, [&](int64_t part) {
    g_part_runs[part]++;
    {
      std::lock_guard<std::mutex> lock(g_part_mutex);
      g_part_threads.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (part == 0)
      for (int64_t i = 0; i < 6; ++i) static_cast<float*>(out.data)[i] = static_cast<const float*>(in.data)[i];
  });
}

void FailOnePart(const HostKernelCall& call) {
  call.parallel.For(4, [](int64_t part) {
    if (part == 2) throw std::runtime_error("part 2 of 4 failed");
  });
}

TEST(HostParallelTest, EveryPartRunsOnceOnThePoolThreads) {
  Client& client = Client::Get();
  RegisterHostKernel(client.api(), "test_copy_in_parts", HostKernelHandler<CopyInParts>);
  ExecutablePtr exe = client.Compile(HostCallModule("test_copy_in_parts"));
  for (auto& runs : g_part_runs) runs = 0;
  g_part_threads.clear();
  BufferPtr a = Upload<float>({1, 2, 3, 4, 5, 6}, ElementType::kF32, {2, 3});
  EXPECT_EQ(Read<float>(*client.Execute(*exe, {{a.get()}}, {0})[0][0]), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  for (int part = 0; part < kParts; ++part) EXPECT_EQ(g_part_runs[part], 1) << "part " << part;
  // The CPU plugin's pool has a thread per device at least; with 8 parts of 5 ms, more
  // than one of its threads takes part.
  EXPECT_GE(g_thread_count, kDevices);
  EXPECT_GE(g_part_threads.size(), 2u);
}

TEST(HostParallelTest, ConcurrentSplittingKernelsComplete) {
  // Two independent calls, which XLA may run at once on two pool threads, each waiting
  // for parts that the other thread's pool tasks could not start: the callers run them.
  Client& client = Client::Get();
  RegisterHostKernel(client.api(), "test_copy_in_parts_twice", HostKernelHandler<CopyInParts>);
  ExecutablePtr exe = client.Compile(R"(
module @two_calls {
  func.func public @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = "stablehlo.custom_call"(%a) {call_target_name = "test_copy_in_parts_twice", api_version = 4 : i32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = "stablehlo.custom_call"(%b) {call_target_name = "test_copy_in_parts_twice", api_version = 4 : i32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %2 = "stablehlo.subtract"(%0, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    return %2 : tensor<2x3xf32>
  }
}
)");
  BufferPtr a = Upload<float>({1, 2, 3, 4, 5, 6}, ElementType::kF32, {2, 3});
  BufferPtr b = Upload<float>({6, 5, 4, 3, 2, 1}, ElementType::kF32, {2, 3});
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(Read<float>(*client.Execute(*exe, {{a.get(), b.get()}}, {0})[0][0]),
              (std::vector<float>{-5, -3, -1, 1, 3, 5}));
}

TEST(HostParallelTest, ExceptionOfAPartFailsTheExecution) {
  ExpectHostCallFails("test_fail_one_part", HostKernelHandler<FailOnePart>, "part 2 of 4 failed");
}

TEST(PassThroughKernelTest, ResultIsTheOperandWithOrWithoutAliasing) {
  Client& client = Client::Get();
  ASSERT_TRUE(PassThroughKernelAvailable());
  for (const std::string aliasing :
       {std::string(", output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], "
                    "operand_index = 0, operand_tuple_indices = []>]"),
        std::string()}) {
    // (a * 2) computed into a buffer, handed on, then added to a: 3a.
    ExecutablePtr exe = client.Compile(R"(
module @pass_through {
  func.func public @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = "stablehlo.add"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = "stablehlo.custom_call"(%0) {call_target_name = ")" + std::string(kPassThroughTarget) +
                                       R"(", api_version = 4 : i32)" + aliasing + R"(} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %2 = "stablehlo.add"(%1, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    return %2 : tensor<2x3xf32>
  }
}
)");
    BufferPtr a = Upload<float>({1, 2, 3, 4, 5, 6}, ElementType::kF32, {2, 3});
    EXPECT_EQ(Read<float>(*client.Execute(*exe, {{a.get()}}, {0})[0][0]), (std::vector<float>{3, 6, 9, 12, 15, 18}))
        << (aliasing.empty() ? "copying" : "aliased");
  }
}

TEST(HostParallelTest, WithoutAPoolPartsRunOnTheCallingThread) {
  HostParallel parallel;
  EXPECT_EQ(parallel.thread_count(), 1);
  std::vector<std::thread::id> threads(5);
  parallel.For(5, [&](int64_t part) { threads[part] = std::this_thread::get_id(); });
  for (const auto& id : threads) EXPECT_EQ(id, std::this_thread::get_id());
  EXPECT_THROW(parallel.For(2, [](int64_t) { throw std::invalid_argument("x"); }), std::invalid_argument);
}

}  // namespace
}  // namespace torch_xla::runtime
