#pragma once
// Glue between Python objects and the C++ API for the Cython module: unpacks
// torch.Tensor objects (through torch's own python_variable.h) so that the .pyx file
// deals in Python objects only.
#include <Python.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>

#include <string>
#include <vector>

#include "aten/api.h"
#include "aten/dlpack.h"
#include "aten/loops.h"
#include "distributed/collectives.h"
#include "ops/user_computation.h"

namespace torch_xla::python {

inline std::vector<at::Tensor> UnpackTensors(PyObject* sequence) {
  std::vector<at::Tensor> out;
  PyObject* fast = PySequence_Fast(sequence, "expected a sequence of tensors");
  if (!fast) throw std::invalid_argument("expected a sequence of tensors");
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
    if (!THPVariable_Check(item)) {
      Py_DECREF(fast);
      throw std::invalid_argument("expected a torch.Tensor at position " + std::to_string(i));
    }
    out.push_back(THPVariable_Unpack(item));
  }
  Py_DECREF(fast);
  return out;
}

inline std::string GetStableHlo(PyObject* tensors) { return torch_xla::GetStableHlo(UnpackTensors(tensors)); }
inline std::string GetIrText(PyObject* tensors) { return torch_xla::GetIrText(UnpackTensors(tensors)); }

// Without the GIL while the graph runs: other replicas' threads may need it to arrive.
inline void SyncTensors(PyObject* tensors, bool wait) {
  std::vector<at::Tensor> unpacked = UnpackTensors(tensors);
  PyThreadState* state = PyEval_SaveThread();
  try {
    torch_xla::SyncTensors(unpacked, wait);
  } catch (...) {
    PyEval_RestoreThread(state);
    throw;
  }
  PyEval_RestoreThread(state);
}

inline at::Tensor UnpackTensor(PyObject* object) {
  if (!THPVariable_Check(object)) throw std::invalid_argument("expected a torch.Tensor");
  return THPVariable_Unpack(object);
}

inline uint64_t TensorId(PyObject* tensor) { return torch_xla::TensorId(UnpackTensor(tensor)); }
inline bool SetBufferDonation(PyObject* tensor, bool donate) {
  return torch_xla::SetBufferDonation(UnpackTensor(tensor), donate);
}
inline bool GetBufferDonation(PyObject* tensor) { return torch_xla::GetBufferDonation(UnpackTensor(tensor)); }
inline bool IsDonatedPlaceholder(PyObject* tensor) { return torch_xla::IsDonatedPlaceholder(UnpackTensor(tensor)); }
inline std::string TensorDebugInfo(PyObject* tensor) { return torch_xla::TensorDebugInfo(UnpackTensor(tensor)); }

inline void OptimizationBarrier(PyObject* tensors) { torch_xla::OptimizationBarrier(UnpackTensors(tensors)); }

// A new reference to a Python list of the tensors.
inline PyObject* WrapTensors(const std::vector<at::Tensor>& tensors) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(tensors.size()));
  if (!list) throw std::runtime_error("out of memory");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    PyObject* item = THPVariable_Wrap(tensors[i]);
    if (!item) {
      Py_DECREF(list);
      throw std::runtime_error("cannot wrap a tensor for Python");
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), item);
  }
  return list;
}

// GetGraphProgram over a Python sequence of tensors: the list of the parameters' tensors;
// the StableHLO goes to `stablehlo`.
inline PyObject* GraphProgramParameters(PyObject* tensors, std::string* stablehlo) {
  auto [text, parameters] = torch_xla::GetGraphProgram(UnpackTensors(tensors));
  *stablehlo = std::move(text);
  return WrapTensors(parameters);
}

inline int64_t ParameterIdOf(PyObject* parameters, PyObject* tensor) {
  return torch_xla::ParameterIdOf(UnpackTensors(parameters), UnpackTensor(tensor));
}

// LoopTrace (aten/loops.h) over Python sequences of tensors.
inline LoopTrace* NewLoopTrace(PyObject* carried, const std::string& op_name) {
  return new LoopTrace(UnpackTensors(carried), op_name);
}
inline PyObject* LoopTraceBeginFunction(LoopTrace* trace) { return WrapTensors(trace->BeginFunction()); }
inline void LoopTraceEndFunction(LoopTrace* trace, PyObject* results, PyObject* stand_ins) {
  trace->EndFunction(UnpackTensors(results), UnpackTensors(stand_ins));
}
inline PyObject* LoopTraceFinish(LoopTrace* trace) { return WrapTensors(trace->Finish()); }
inline void LoopTraceAbort(LoopTrace* trace) { trace->Abort(); }
inline PyObject* RandomStateTensor(int device) { return THPVariable_Wrap(torch_xla::RandomStateTensor(device)); }
inline void SetRandomStateTensor(PyObject* state) { torch_xla::SetRandomStateTensor(UnpackTensor(state)); }

inline PyObject* AllReduce(const std::string& reduce_type, PyObject* tensors, double scale,
                           const ReplicaGroups& groups) {
  return WrapTensors(torch_xla::AllReduce(reduce_type, UnpackTensors(tensors), scale, groups));
}

inline PyObject* AllGather(PyObject* tensor, int64_t dim, const ReplicaGroups& groups) {
  return THPVariable_Wrap(torch_xla::AllGather(UnpackTensor(tensor), dim, groups));
}

inline PyObject* ReduceScatter(const std::string& reduce_type, PyObject* tensor, double scale, int64_t scatter_dim,
                               int64_t shard_count, const ReplicaGroups& groups) {
  return THPVariable_Wrap(
      torch_xla::ReduceScatter(reduce_type, UnpackTensor(tensor), scale, scatter_dim, shard_count, groups));
}

inline PyObject* AllToAll(PyObject* tensor, int64_t split_dim, int64_t concat_dim, int64_t split_count,
                          const ReplicaGroups& groups) {
  return THPVariable_Wrap(torch_xla::AllToAll(UnpackTensor(tensor), split_dim, concat_dim, split_count, groups));
}

inline PyObject* CollectivePermute(PyObject* tensor, const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  return THPVariable_Wrap(torch_xla::CollectivePermute(UnpackTensor(tensor), pairs));
}

inline PyObject* CallUserComputation(const std::string& op_name, PyObject* inputs, const std::string& symbol,
                                     const std::string& function_text, const std::vector<BuilderShape>& parameters,
                                     const std::vector<BuilderShape>& results) {
  return WrapTensors(
      torch_xla::CallUserComputation(op_name, UnpackTensors(inputs), symbol, function_text, parameters, results));
}

inline BuilderShape BuilderShapeOf(PyObject* tensor) { return torch_xla::BuilderShapeOf(UnpackTensor(tensor)); }

inline PyObject* HostViewOfXlaTensor(PyObject* tensor) {
  return THPVariable_Wrap(torch_xla::HostViewOfXlaTensor(UnpackTensor(tensor)));
}

inline PyObject* XlaTensorFromHostMemory(PyObject* tensor, int ordinal, bool* shared) {
  return THPVariable_Wrap(torch_xla::XlaTensorFromHostMemory(UnpackTensor(tensor), ordinal, shared));
}

inline uint64_t UnsafeBufferPointer(PyObject* tensor) { return torch_xla::UnsafeBufferPointer(UnpackTensor(tensor)); }

// SPMD (aten/spmd.cpp).
inline void MarkSharding(PyObject* tensor, const std::string& sharding) {
  torch_xla::MarkSharding(UnpackTensor(tensor), sharding);
}
inline void AnnotateCustomSharding(PyObject* tensor, const std::string& sharding) {
  torch_xla::AnnotateCustomSharding(UnpackTensor(tensor), sharding);
}
inline void ClearSharding(PyObject* tensor) { torch_xla::ClearSharding(UnpackTensor(tensor)); }
inline std::string ShardingSpec(PyObject* tensor) { return torch_xla::ShardingSpec(UnpackTensor(tensor)); }
// A new reference to a list of (CPU tensor, device ordinal) tuples.
inline PyObject* LocalShards(PyObject* tensor) {
  std::vector<std::pair<at::Tensor, int>> shards = torch_xla::LocalShards(UnpackTensor(tensor));
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(shards.size()));
  if (!list) throw std::runtime_error("out of memory");
  for (std::size_t i = 0; i < shards.size(); ++i) {
    PyObject* item = Py_BuildValue("(Ni)", THPVariable_Wrap(shards[i].first), shards[i].second);
    if (!item) {
      Py_DECREF(list);
      throw std::runtime_error("cannot wrap a shard for Python");
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), item);
  }
  return list;
}
inline void LoadLocalShards(PyObject* tensor, PyObject* shards, const std::vector<int>& devices) {
  torch_xla::LoadLocalShards(UnpackTensor(tensor), UnpackTensors(shards), devices);
}
inline PyObject* SpmdFullToShardShape(PyObject* tensor) {
  return THPVariable_Wrap(torch_xla::SpmdFullToShardShape(UnpackTensor(tensor)));
}
inline PyObject* SpmdShardToFullShape(PyObject* tensor, const std::string& sharding,
                                      const std::vector<int64_t>& full_shape, PyObject* dtype) {
  if (!THPDtype_Check(dtype)) throw std::invalid_argument("_spmd_shard_to_full_shape: expected a torch.dtype");
  return THPVariable_Wrap(torch_xla::SpmdShardToFullShape(UnpackTensor(tensor), sharding, full_shape,
                                                          reinterpret_cast<THPDtype*>(dtype)->scalar_type));
}
inline PyObject* SpmdAllReduce(const std::string& reduce_type, PyObject* tensor, double scale,
                               const std::vector<std::vector<int64_t>>& groups) {
  return THPVariable_Wrap(torch_xla::SpmdAllReduce(reduce_type, UnpackTensor(tensor), scale, groups));
}
inline PyObject* SpmdReduceScatter(const std::string& reduce_type, PyObject* tensor, double scale,
                                   int64_t scatter_dim, int64_t shard_count,
                                   const std::vector<std::vector<int64_t>>& groups) {
  return THPVariable_Wrap(
      torch_xla::SpmdReduceScatter(reduce_type, UnpackTensor(tensor), scale, scatter_dim, shard_count, groups));
}
inline void MarkManualSharding(PyObject* tensor) { torch_xla::MarkManualSharding(UnpackTensor(tensor)); }
inline PyObject* GlobalTensorFromCpuShards(PyObject* shards, const std::string& sharding, bool has_shape,
                                           const std::vector<int64_t>& global_shape) {
  std::optional<std::vector<int64_t>> shape;
  if (has_shape) shape = global_shape;
  return THPVariable_Wrap(torch_xla::GlobalTensorFromCpuShards(UnpackTensors(shards), sharding, shape));
}

}  // namespace torch_xla::python
