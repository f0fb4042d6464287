// The key-value bridge that a multi-process PJRT runtime (the CUDA plugin's) uses, tested
// on the CPU: the PJRT_Client_Create callbacks over torch's TCPStore, with a value set by
// another process, a blocking get with a timeout, keys kept under their prefix.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "distributed/process_store.h"
#include "pjrt_c_api.h"
#include "runtime/key_value_store.h"

namespace torch_xla {
namespace {

using namespace std::chrono_literals;

// What the plugin's callback_error received last.
PJRT_Error_Code last_code = PJRT_Error_Code_OK;
std::string last_message;

PJRT_Error* RecordError(PJRT_Error_Code code, const char* message, size_t size) {
  last_code = code;
  last_message.assign(message, size);
  return reinterpret_cast<PJRT_Error*>(0x1);  // any non-null error: the tests only compare it
}
PJRT_CallbackError record_error = RecordError;

class ProcessStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c10d::TCPStoreOptions options;
    options.port = 0;  // any free port
    options.isServer = true;
    options.waitWorkers = false;
    server_ = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
    port_ = server_->getPort();
    store_ = ConnectProcessStore("127.0.0.1", port_, "torch_xla/pjrt", 10s);
    last_code = PJRT_Error_Code_OK;
    last_message.clear();
  }

  std::string Get(const std::string& key, int timeout_ms, PJRT_Error** error) {
    PJRT_KeyValueGetCallback_Args args{};
    args.struct_size = PJRT_KeyValueGetCallback_Args_STRUCT_SIZE;
    args.key = key.data();
    args.key_size = key.size();
    args.timeout_in_ms = timeout_ms;
    args.callback_error = &record_error;
    args.user_arg = store_.get();
    *error = runtime::internal::KeyValueGet(&args);
    if (*error != nullptr) return "";
    std::string value(args.value, args.value_size);
    args.value_deleter_callback(args.value);
    return value;
  }

  c10::intrusive_ptr<c10d::TCPStore> server_;
  int port_ = 0;
  std::shared_ptr<runtime::KeyValueStore> store_;
};

TEST_F(ProcessStoreTest, AGetWaitsForTheValueAnotherProcessPuts) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Another process: its own connection, its value set a moment later.
    auto other = ConnectProcessStore("127.0.0.1", port_, "torch_xla/pjrt", 10s);
    std::this_thread::sleep_for(300ms);
    other->Put("topology", std::string("node 1\0bytes", 12));
    _exit(0);
  }
  auto start = std::chrono::steady_clock::now();
  PJRT_Error* error = nullptr;
  std::string value = Get("topology", 20000, &error);
  EXPECT_EQ(error, nullptr) << last_message;
  EXPECT_EQ(value, std::string("node 1\0bytes", 12));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);  // it waited for the put
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(ProcessStoreTest, AGetOfAKeyNobodySetsTimesOut) {
  auto start = std::chrono::steady_clock::now();
  PJRT_Error* error = nullptr;
  Get("never", 200, &error);
  EXPECT_NE(error, nullptr);
  EXPECT_EQ(last_code, PJRT_Error_Code_DEADLINE_EXCEEDED);
  EXPECT_NE(last_message.find("no process set 'never' within 200 ms"), std::string::npos) << last_message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_F(ProcessStoreTest, PutAndTryGetThroughTheCallbacksKeepKeysUnderThePrefix) {
  std::string key = "nccl_id", value = "0123";
  PJRT_KeyValuePutCallback_Args put{};
  put.struct_size = PJRT_KeyValuePutCallback_Args_STRUCT_SIZE;
  put.key = key.data();
  put.key_size = key.size();
  put.value = value.data();
  put.value_size = value.size();
  put.callback_error = &record_error;
  put.user_arg = store_.get();
  ASSERT_EQ(runtime::internal::KeyValuePut(&put), nullptr) << last_message;
  // The raw store holds it under the prefix; a store with another prefix does not see it.
  EXPECT_TRUE(server_->check({"torch_xla/pjrt/nccl_id"}));
  EXPECT_FALSE(server_->check({"nccl_id"}));
  auto elsewhere = ConnectProcessStore("127.0.0.1", port_, "someone_else", 10s);
  EXPECT_FALSE(elsewhere->TryGet("nccl_id").has_value());

  PJRT_KeyValueTryGetCallback_Args get{};
  get.struct_size = PJRT_KeyValueTryGetCallback_Args_STRUCT_SIZE;
  get.key = key.data();
  get.key_size = key.size();
  get.callback_error = &record_error;
  get.user_arg = store_.get();
  ASSERT_EQ(runtime::internal::KeyValueTryGet(&get), nullptr) << last_message;
  EXPECT_EQ(std::string(get.value, get.value_size), value);
  get.value_deleter_callback(get.value);

  std::string missing = "missing";
  get.key = missing.data();
  get.key_size = missing.size();
  EXPECT_NE(runtime::internal::KeyValueTryGet(&get), nullptr);
  EXPECT_EQ(last_code, PJRT_Error_Code_NOT_FOUND);
}

TEST_F(ProcessStoreTest, AnUnreachableStoreIsAnError) {
  EXPECT_THROW(ConnectProcessStore("127.0.0.1", 1, "torch_xla/pjrt", 300ms), c10::Error);
  EXPECT_THROW(ConnectProcessStore("127.0.0.1", 0, "torch_xla/pjrt", 300ms), c10::Error);
}

}  // namespace
}  // namespace torch_xla
