# distutils: language = c++
# cython: language_level=3
"""The compiled core of torch_xla: device, sync, RNG, memory and metrics functions
over the C++ runtime, calls of xla_builder computations, and DLPack views of buffers.
Importing it registers the XLA kernels with PyTorch."""

from libc.stdint cimport int64_t, uint64_t
from libcpp cimport bool as cbool
from libcpp.pair cimport pair
from libcpp.string cimport string
from libcpp.vector cimport vector
from cpython.ref cimport PyObject

cdef extern from "python_errors.h" namespace "torch_xla::python":
    int RaisePyError() except *

cdef extern from "runtime/persistent_cache.h" namespace "torch_xla::runtime":
    void SetPersistentCache(const string& folder, cbool read_only) except +RaisePyError

cdef extern from "runtime/client.h" namespace "torch_xla::runtime":
    cdef cppclass Client:
        @staticmethod
        void SetDefaultPluginPath(const string& kind, const string& path) except +RaisePyError
        @staticmethod
        cbool IsCreated()

cdef extern from "exec/graph_executor.h" namespace "torch_xla::exec":
    size_t CachedComputationCount() except +RaisePyError
    void SetAliasWithBufferDonorConfig(cbool enabled) except +RaisePyError
    cbool GetAliasWithBufferDonorConfig() except +RaisePyError

cdef extern from "exec/graph_debug.h" namespace "torch_xla::exec":
    cdef cppclass SyncCause:
        string compilation
        string execution
        string graph_name
    void SetSyncCause(SyncCause cause)
    int DebugLevel()

cdef extern from "lowering/matmul_precision.h" namespace "torch_xla::lowering":
    cdef enum MatMulPrecision "torch_xla::lowering::MatMulPrecision":
        pass
    void SetMatMulPrecision(MatMulPrecision precision)
    MatMulPrecision GetMatMulPrecision()
    string MatMulPrecisionName(MatMulPrecision precision)
    MatMulPrecision ParseMatMulPrecision(const string& name) except +RaisePyError

cdef extern from "runtime/metrics.h" namespace "torch_xla::metrics":
    cdef cppclass MetricSnapshot:
        int64_t count
        double total
        vector[double] samples
    vector[string] CounterNames() except +RaisePyError
    vector[string] MetricNames() except +RaisePyError
    int64_t CounterValue(const string& name) except +RaisePyError
    cdef cppclass Counter:
        void Add(int64_t n)
    Counter* GetCounter(const string& name) except +RaisePyError
    vector[string] FallbackCounterNames() except +RaisePyError
    string ShortReport(const vector[string]& counter_names,
                       const vector[string]& metric_names) except +RaisePyError
    cbool MetricData(const string& name, MetricSnapshot* out) except +RaisePyError
    void ClearCounters() except +RaisePyError
    void ClearMetrics() except +RaisePyError
    string Report() except +RaisePyError

cdef extern from "runtime/trace_recorder.h" namespace "torch_xla::runtime::trace":
    cdef cppclass TraceEvent:
        string name
        int64_t start_ns
        int64_t end_ns
        int64_t thread
        string track
        vector[pair[string, string]] args
    cbool Recording()
    int64_t NowNs()
    int64_t CurrentThreadId()
    cbool StartRecording() except +RaisePyError
    vector[TraceEvent] StopRecording(int64_t* dropped) except +RaisePyError
    void Record(TraceEvent event) except +RaisePyError

cdef extern from "aten/api.h" namespace "torch_xla":
    int DeviceCount() except +RaisePyError
    string DeviceKind() except +RaisePyError
    void Sync(cbool wait) except +RaisePyError nogil
    void SyncDevices(const vector[int]& ordinals, cbool wait) except +RaisePyError nogil
    void WaitDeviceOps() except +RaisePyError nogil
    void SetRngState(uint64_t seed, int ordinal) except +RaisePyError
    void UseSpmd() except +RaisePyError
    cbool IsSpmd() except +RaisePyError
    uint64_t GetRngState(int ordinal) except +RaisePyError
    cdef struct DeviceMemory:
        int64_t bytes_in_use
        int64_t bytes_limit
        int64_t peak_bytes_in_use
    DeviceMemory MemoryInfo(int ordinal) except +RaisePyError
    void SetHostConvolution(const string& mode) except +RaisePyError
    string HostConvolution() except +RaisePyError

cdef extern from "distributed/collectives.h" namespace "torch_xla":
    void BeginReplication(const vector[int]& ordinals) except +RaisePyError
    void EndReplication(const string& why) except +RaisePyError
    void LeaveReplication(int replica, const string& why) except +RaisePyError
    void AbortReplication(const string& why) except +RaisePyError
    vector[int] ReplicationDevices() except +RaisePyError
    double ReplicaTimeoutSeconds() except +RaisePyError

cdef extern from "distributed/cross_process.h" namespace "torch_xla":
    void SetProcessLayout(int index, int count) except +RaisePyError

cdef extern from "distributed/process_store.h" namespace "torch_xla":
    void ConfigureProcessRuntime(int node_id, int num_nodes, const vector[int64_t]& visible_devices,
                                 const string& host, int port) except +RaisePyError

cdef extern from "aten/api.h" namespace "torch_xla":
    cdef cppclass FallbackCaller:
        string op
        string caller
        int64_t count
    vector[FallbackCaller] FallbackCallers() except +RaisePyError
    int CurrentDevice() except +RaisePyError
    void SetCurrentDevice(int ordinal) except +RaisePyError

cdef extern from "python_frames.h" namespace "torch_xla::python":
    void InstallCallerProviders()

cdef extern from "aten/eager_mode.h" namespace "torch_xla":
    void SetEagerMode(cbool enabled)
    cbool EagerMode()
    void SyncIfEager() except +RaisePyError

cdef extern from "exec/graph_executor.h" namespace "torch_xla::exec":
    void SetAllowExecution(cbool allow)
    cbool AllowExecution()
    vector[uint64_t] LastSyncGraphHashes()

cdef extern from "aten/loops.h" namespace "torch_xla":
    cdef cppclass LoopTrace:
        pass

cdef extern from "python_tensors.h" namespace "torch_xla::python":
    void OptimizationBarrier(PyObject* tensors) except +RaisePyError
    LoopTrace* NewLoopTrace(PyObject* carried, const string& op_name) except +RaisePyError
    object LoopTraceBeginFunction(LoopTrace* trace) except +RaisePyError
    void LoopTraceEndFunction(LoopTrace* trace, PyObject* results, PyObject* stand_ins) except +RaisePyError
    object LoopTraceFinish(LoopTrace* trace) except +RaisePyError
    void LoopTraceAbort(LoopTrace* trace)
    object RandomStateTensor(int device) except +RaisePyError
    void SetRandomStateTensor(PyObject* state) except +RaisePyError
    string GetStableHlo(PyObject* tensors) except +RaisePyError
    object GraphProgramParameters(PyObject* tensors, string* stablehlo) except +RaisePyError
    int64_t ParameterIdOf(PyObject* parameters, PyObject* tensor) except +RaisePyError
    string GetIrText(PyObject* tensors) except +RaisePyError
    void SyncTensors(PyObject* tensors, cbool wait) except +RaisePyError
    uint64_t TensorId(PyObject* tensor) except +RaisePyError
    cbool SetBufferDonation(PyObject* tensor, cbool donate) except +RaisePyError
    cbool GetBufferDonation(PyObject* tensor) except +RaisePyError
    cbool IsDonatedPlaceholder(PyObject* tensor) except +RaisePyError
    string TensorDebugInfo(PyObject* tensor) except +RaisePyError
    object AllReduce(const string& reduce_type, PyObject* tensors, double scale,
                     const vector[vector[int64_t]]& groups) except +RaisePyError
    object AllGather(PyObject* tensor, int64_t dim, const vector[vector[int64_t]]& groups) except +RaisePyError
    object ReduceScatter(const string& reduce_type, PyObject* tensor, double scale, int64_t scatter_dim,
                         int64_t shard_count, const vector[vector[int64_t]]& groups) except +RaisePyError
    object AllToAll(PyObject* tensor, int64_t split_dim, int64_t concat_dim, int64_t split_count,
                    const vector[vector[int64_t]]& groups) except +RaisePyError
    object CollectivePermute(PyObject* tensor, const vector[pair[int64_t, int64_t]]& pairs) except +RaisePyError
    object CallUserComputation(const string& op_name, PyObject* inputs, const string& symbol,
                               const string& function_text, const vector[pair[string, vector[int64_t]]]& parameters,
                               const vector[pair[string, vector[int64_t]]]& results) except +RaisePyError
    pair[string, vector[int64_t]] BuilderShapeOf(PyObject* tensor) except +RaisePyError
    object HostViewOfXlaTensor(PyObject* tensor) except +RaisePyError
    void MarkSharding(PyObject* tensor, const string& sharding) except +RaisePyError
    void AnnotateCustomSharding(PyObject* tensor, const string& sharding) except +RaisePyError
    void ClearSharding(PyObject* tensor) except +RaisePyError
    string ShardingSpec(PyObject* tensor) except +RaisePyError
    object LocalShards(PyObject* tensor) except +RaisePyError
    void LoadLocalShards(PyObject* tensor, PyObject* shards, const vector[int]& devices) except +RaisePyError
    object SpmdFullToShardShape(PyObject* tensor) except +RaisePyError
    object SpmdShardToFullShape(PyObject* tensor, const string& sharding, const vector[int64_t]& full_shape,
                                PyObject* dtype) except +RaisePyError
    void MarkManualSharding(PyObject* tensor) except +RaisePyError
    object SpmdAllReduce(const string& reduce_type, PyObject* tensor, double scale,
                         const vector[vector[int64_t]]& groups) except +RaisePyError
    object SpmdReduceScatter(const string& reduce_type, PyObject* tensor, double scale, int64_t scatter_dim,
                             int64_t shard_count, const vector[vector[int64_t]]& groups) except +RaisePyError
    object GlobalTensorFromCpuShards(PyObject* shards, const string& sharding, cbool has_shape,
                                     const vector[int64_t]& global_shape) except +RaisePyError
    object XlaTensorFromHostMemory(PyObject* tensor, int ordinal, cbool* shared) except +RaisePyError
    uint64_t UnsafeBufferPointer(PyObject* tensor) except +RaisePyError


def _set_default_plugin_path(str kind, str path):
    Client.SetDefaultPluginPath(kind.encode(), path.encode())

def _xla_set_persistent_cache(str folder, cbool read_only):
    """Keeps compiled executables in `folder` across processes ("" turns it off)."""
    SetPersistentCache(folder.encode(), read_only)

def _xla_client_created():
    return Client.IsCreated()

def _xla_runtime_is_initialized():
    """Whether the runtime (the PJRT client) has started."""
    return Client.IsCreated()

def _xla_cached_computation_count():
    return CachedComputationCount()

def _xla_real_devices(devices):
    """The runtime's names ('CPU:0') of XLA devices given as 'xla:N'."""
    kind = DeviceKind().decode()
    count = DeviceCount()
    names = []
    for d in devices:
        text = str(d)
        ordinal = int(text.split(':')[1]) if ':' in text else 0
        if not text.startswith('xla') or not 0 <= ordinal < count:
            raise ValueError(f"_xla_real_devices: '{text}' is not an XLA device of this "
                             f"process (xla:0..xla:{count - 1})")
        names.append(f'{kind}:{ordinal}')
    return names

def _xla_get_all_devices():
    """The runtime's names of the devices of every process of the run, in global order."""
    from torch_xla import runtime
    kind = DeviceKind().decode()
    return [f'{kind}:{i}' for i in range(runtime.global_device_count())]

def _xla_device_kind():
    return DeviceKind().decode()

def _xla_device_count():
    return DeviceCount()

def _xla_sync(devices=None, cbool wait=False):
    cdef vector[int] ordinals
    if devices is None:
        with nogil:
            Sync(wait)
        return
    for d in devices:
        ordinals.push_back(int(d))
    with nogil:
        SyncDevices(ordinals, wait)

def _xla_sync_tensors(tensors, cbool wait=False):
    """Computes these tensors' pending values, and nothing else of the step."""
    SyncTensors(<PyObject*>tensors, wait)

def _xla_wait_device_ops():
    with nogil:
        WaitDeviceOps()

def _xla_set_rng_state(seed, int device):
    SetRngState(<uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF), device)

def _xla_get_rng_state(int device):
    return GetRngState(device)

def _xla_memory_info(int device):
    """(bytes in use, bytes limit, peak bytes in use or -1) of the device."""
    cdef DeviceMemory info = MemoryInfo(device)
    return (info.bytes_in_use, info.bytes_limit, info.peak_bytes_in_use)

def _xla_set_mat_mul_precision(str precision):
    SetMatMulPrecision(ParseMatMulPrecision(precision.encode()))

def _xla_get_mat_mul_precision():
    return MatMulPrecisionName(GetMatMulPrecision()).decode()

def _xla_set_host_convolution(str mode):
    SetHostConvolution(mode.encode())

def _xla_host_convolution():
    return HostConvolution().decode()

def _xla_metrics_report():
    return Report().decode()

def _xla_counter_names():
    return [n.decode() for n in CounterNames()]

def _xla_counter_value(str name):
    """The counter's value; None for a counter never bumped or cleared since."""
    cdef int64_t v = CounterValue(name.encode())
    return None if v <= 0 else v

def _xla_increment_counter(str name, int64_t value):
    GetCounter(name.encode()).Add(value)

def _get_executed_fallback_ops():
    """The ops that ran on the CPU fallback since the counters were cleared."""
    return [n.decode() for n in FallbackCounterNames()]

def _short_xla_metrics_report(counter_names, metric_names):
    cdef vector[string] counters = [n.encode() for n in counter_names]
    cdef vector[string] metrics = [n.encode() for n in metric_names]
    return ShortReport(counters, metrics).decode()

def _xla_metric_names():
    return [n.decode() for n in MetricNames()]

def _xla_metric_data(str name):
    cdef MetricSnapshot snap
    if not MetricData(name.encode(), &snap):
        return None
    return (snap.count, snap.total, list(snap.samples))

def _xla_clear_counters():
    ClearCounters()

def _xla_clear_metrics():
    ClearMetrics()

_clear_xla_counters = _xla_clear_counters
_clear_xla_metrics = _xla_clear_metrics

def _get_stablehlo(tensors):
    return GetStableHlo(<PyObject*>tensors).decode()

def _shape_json(t):
    """A tensor's shape as HLO's JSON writes one (XLA's element type names)."""
    from torch_xla.core._builder_types import PT_XLA_TYPE_MAP
    element_type = PT_XLA_TYPE_MAP[t.dtype].upper() if t.dtype in PT_XLA_TYPE_MAP else str(t.dtype)
    return {'elementType': element_type, 'dimensions': [str(d) for d in t.shape]}


class LoweringContext:
    """The program that computing some tensors compiles, with its parameters, as
    torch_xla's _XLAC.lowering.LoweringContext gives it: build(tensors), then the module
    (StableHLO here: hlo() its bytes, hlo_text() its text, hlo_json() its interface) and
    which tensor feeds each parameter."""

    def __init__(self, name=''):
        self._name = name
        self._text = None
        self._parameters = []
        self._results = []

    def set_name_string(self, name):
        self._name = name

    def get_name_string(self):
        return self._name

    def build(self, tensors):
        """Lowers the graph that computes `tensors` (nothing runs)."""
        cdef string text
        tensors = list(tensors)
        self._parameters = GraphProgramParameters(<PyObject*>tensors, &text)
        self._text = text.decode()
        self._results = tensors
        if self._name:
            self._text = self._text.replace('module @SyncTensorsGraph', f'module @"{self._name}"', 1)

    def _built(self):
        if self._text is None:
            raise RuntimeError('LoweringContext: call build(tensors) first')
        return self._text

    def hlo(self):
        """The module's text, as bytes."""
        return self._built().encode()

    def hlo_text(self):
        """The StableHLO module."""
        return self._built()

    def hlo_json(self):
        """The module's name and interface as JSON: hostProgramShape's parameters and
        result (XLA's element type names), entryComputationName."""
        import json
        self._built()
        results = [_shape_json(t) for t in self._results]
        return json.dumps({
            'name': self._name or 'SyncTensorsGraph',
            'entryComputationName': 'main',
            'hostProgramShape': {
                'parameters': [_shape_json(t) for t in self._parameters],
                'parameterNames': [f'p{i}' for i in range(len(self._parameters))],
                'result': results[0] if len(results) == 1 else {'elementType': 'TUPLE', 'tupleShapes': results},
            },
        })

    def parameter_id_tensor_mapping(self):
        """{parameter index: its value as a CPU tensor} (read from the device)."""
        self._built()
        return {i: t.cpu() for i, t in enumerate(self._parameters)}

    def device_parameter_id_tensor_mapping(self):
        """{parameter index: its value as an XLA tensor} (nothing moves)."""
        self._built()
        return dict(enumerate(self._parameters))

    def tensor_parameter_id(self, tensor):
        """The index of the parameter that `tensor`'s device data feeds, or -1."""
        self._built()
        return ParameterIdOf(<PyObject*>self._parameters, <PyObject*>tensor)


class _LoweringModule:
    """_XLAC.lowering: LoweringContext."""
    LoweringContext = LoweringContext


lowering = _LoweringModule()


def _get_xla_tensors_hlo(tensors):
    """The module that computing the tensors would compile, as text: StableHLO, the
    form in which graphs are given to the compiler here."""
    cdef object listed = list(tensors)
    return GetStableHlo(<PyObject*>listed).decode()

def _get_xla_tensor_debug_info(tensor):
    return TensorDebugInfo(<PyObject*>tensor).decode()

def _get_xla_tensor_shape_type(tensor):
    """The element type of the tensor on the device ('f32', 'bf16', 's64', ...)."""
    return _xla_op_tensor_shape(tensor)['type']

def _get_xla_tensor_dimension_size(tensor, int dim):
    """The size of dimension `dim`, as a 0-dimensional int32 tensor on the device."""
    import torch
    return torch.tensor(tensor.size(dim), dtype=torch.int32, device=tensor.device)

def _replace_xla_tensor(tensor, source):
    """Makes `tensor` hold `source`'s value (and shape): the two share one device value
    from then on, as Tensor.set_ makes them; the value `tensor` had is released."""
    if tensor.device.type != 'xla' or source.device.type != 'xla':
        raise RuntimeError(f'_replace_xla_tensor: expected two XLA tensors, got tensors on {tensor.device} '
                           f'and {source.device}')
    return tensor.set_(source)

def _xla_tensors_from_aten(tensors, devices):
    """The tensors moved to the devices ('xla:N'), one device per tensor."""
    return [t.to(d) for t, d in zip(tensors, devices)]

def _xla_sync_multi(tensors, devices, cbool wait=True, cbool sync_xla_data=True):
    """Computes these tensors' pending values, and nothing else of the step."""
    cdef object listed = list(tensors)
    SyncTensors(<PyObject*>listed, wait)

def _set_buffer_donation(tensor, cbool donate):
    """Lets a later execution take over the tensor's device buffer (its value is then
    gone); False when the tensor holds no buffer yet."""
    return SetBufferDonation(<PyObject*>tensor, donate)

def _get_buffer_donation(tensor):
    return GetBufferDonation(<PyObject*>tensor)

def _is_placecholder(tensor):
    """Whether the tensor's buffer was donated, leaving it without a value."""
    return IsDonatedPlaceholder(<PyObject*>tensor)

_is_placeholder = _is_placecholder

def _xla_set_enable_alias_with_buffer_donor_config(cbool enabled):
    """Whether a sync of some tensors (_xla_sync_multi) donates the buffers marked by
    _set_buffer_donation; a step (torch_xla.sync) always does."""
    SetAliasWithBufferDonorConfig(enabled)

def _xla_get_enable_alias_with_buffer_donor_config():
    return GetAliasWithBufferDonorConfig()

_lazy_backend_initialized = False

def _init_xla_lazy_backend():
    """The backend registers its kernels when torch_xla is imported; the first call here
    records it in the RegisterXLAFunctions counter, as torch_xla's initialization does,
    and later calls do nothing."""
    global _lazy_backend_initialized
    if not _lazy_backend_initialized:
        _lazy_backend_initialized = True
        GetCounter(b'RegisterXLAFunctions').Add(1)

def _get_git_revs():
    """The releases this build is: torch_xla's version and torch's git revision."""
    import torch
    from torch_xla.version import __version__
    return {'xla': __version__, 'torch': torch.version.git_version}

def _get_xla_tensors_text(tensors):
    """The IR graph of the tensors as text (with source lines when XLA_IR_DEBUG=1)."""
    return GetIrText(<PyObject*>tensors).decode()

def _xla_get_tensor_id(tensor):
    """A number naming the XLA tensor's value on the device: equal for tensors that
    are one (tied weights); a tensor updated in place gets a new one."""
    return TensorId(<PyObject*>tensor)

def _xla_optimization_barrier_(tensors):
    """Places an optimization barrier over the tensors' values, in place."""
    OptimizationBarrier(<PyObject*>tensors)

# ---- execution modes (aten/eager_mode.h, exec/graph_executor.h)

def _set_use_eager_mode(cbool enabled):
    """Eager mode: each op on the XLA device is compiled (once per shape) and run at once."""
    SetEagerMode(enabled)

def _get_use_eager_mode():
    return EagerMode()

def _xla_sync_if_eager():
    """In eager mode, runs the pending tensors now, as one op's graph."""
    SyncIfEager()

def _set_allow_execution(cbool allow):
    """Whether the calling thread's syncs may run graphs (off: a sync raises)."""
    SetAllowExecution(allow)

def _get_allow_execution():
    return AllowExecution()

def _xla_last_sync_graph_hashes():
    """The hashes of the graphs the calling thread's last sync ran."""
    return list(LastSyncGraphHashes())

# ---- device loops (aten/loops.h)

cdef class _LoopTrace:
    """Traces a loop's condition and body on stand-ins for its carried values, then
    builds the loop: begin_function() -> stand-ins; end_function(results, stand-ins);
    twice (condition, body); finish() -> the final carried values."""
    cdef LoopTrace* trace

    def __cinit__(self, carried, str op_name):
        self.trace = NewLoopTrace(<PyObject*>carried, op_name.encode())

    def __dealloc__(self):
        del self.trace

    def begin_function(self):
        return LoopTraceBeginFunction(self.trace)

    def end_function(self, results, stand_ins):
        LoopTraceEndFunction(self.trace, <PyObject*>results, <PyObject*>stand_ins)

    def finish(self):
        return LoopTraceFinish(self.trace)

    def abort(self):
        """Gives up the trace (its function raised); restores the random number state."""
        LoopTraceAbort(self.trace)

def _xla_rng_state_tensor(int device):
    """The device's random number state (u64[2]) as a tensor: the state itself, not a copy."""
    return RandomStateTensor(device)

def _xla_set_rng_state_tensor(state):
    """Makes the tensor (a state from _xla_rng_state_tensor) its device's random number state."""
    SetRandomStateTensor(<PyObject*>state)

# IR debugging (XLA_IR_DEBUG, XLA_HLO_DEBUG, XLA_SAVE_TENSORS_FILE, PT_XLA_DEBUG_LEVEL)
# names the user's lines from the Python frames.
InstallCallerProviders()

def _xla_fallback_callers():
    """(op, the user's line that called it, count) of the ops that ran on the CPU
    fallback, recorded with PT_XLA_DEBUG_LEVEL >= 1."""
    return [(c.op.decode(), c.caller.decode(), c.count) for c in FallbackCallers()]

def _xla_debug_level():
    """PT_XLA_DEBUG_LEVEL (every level, 100, for PT_XLA_DEBUG=1; 0 when off)."""
    return DebugLevel()

def _xla_set_sync_cause(compilation='', execution=None, graph_name=''):
    """Names the cause of the calling thread's next syncs for PT_XLA_DEBUG's analysis
    (`execution` defaults to `compilation`); empty causes clear it."""
    cdef SyncCause cause
    cause.compilation = compilation.encode()
    cause.execution = (compilation if execution is None else execution).encode()
    cause.graph_name = graph_name.encode()
    SetSyncCause(cause)

def _xla_current_device():
    """The calling thread's current XLA device ordinal (what 'xla' without an index means)."""
    return CurrentDevice()

def _xla_set_current_device(int ordinal):
    SetCurrentDevice(ordinal)

# ---- replication and collectives (distributed/collectives.h)

def _xla_replication_begin(devices):
    cdef vector[int] ordinals = [int(d) for d in devices]
    BeginReplication(ordinals)

def _xla_replication_end(str why=''):
    EndReplication(why.encode())

def _xla_replication_leave(int replica, str why):
    LeaveReplication(replica, why.encode())

def _xla_replication_abort(str why):
    AbortReplication(why.encode())

def _xla_replication_devices():
    return list(ReplicationDevices())

def _xla_set_process_layout(int index, int count):
    """This process is process `index` of `count` (collectives span them all)."""
    SetProcessLayout(index, count)

def _xla_configure_process_runtime(int node_id, int num_nodes, visible_devices, str host, int port):
    """Before the client exists: process node_id of num_nodes, whose plugin meets the
    others' in the store at host:port (plugins whose runtime spans processes)."""
    cdef vector[int64_t] devices = [int(d) for d in visible_devices]
    ConfigureProcessRuntime(node_id, num_nodes, devices, host.encode(), port)

def _xla_replica_timeout():
    """Seconds a replica waits for the others ($XLA_REPLICA_TIMEOUT, default 300)."""
    return ReplicaTimeoutSeconds()

def _xla_all_reduce(str reduce_type, tensors, double scale, groups):
    return AllReduce(reduce_type.encode(), <PyObject*>tensors, scale, groups)

def _xla_all_gather(tensor, int64_t dim, groups):
    return AllGather(<PyObject*>tensor, dim, groups)

def _xla_reduce_scatter(str reduce_type, tensor, double scale, int64_t scatter_dim,
                        int64_t shard_count, groups):
    return ReduceScatter(reduce_type.encode(), <PyObject*>tensor, scale, scatter_dim,
                         shard_count, groups)

def _xla_all_to_all(tensor, int64_t split_dim, int64_t concat_dim, int64_t split_count, groups):
    return AllToAll(<PyObject*>tensor, split_dim, concat_dim, split_count, groups)

def _xla_collective_permute(tensor, pairs):
    cdef vector[pair[int64_t, int64_t]] c_pairs
    for source, target in pairs:
        c_pairs.push_back(pair[int64_t, int64_t](int(source), int(target)))
    return CollectivePermute(<PyObject*>tensor, c_pairs)

# ---- computations built in Python (torch_xla.core.xla_builder)

cdef vector[pair[string, vector[int64_t]]] _builder_shapes(shapes):
    cdef vector[pair[string, vector[int64_t]]] out
    cdef vector[int64_t] dims
    for type_name, sizes in shapes:
        dims = [int(d) for d in sizes]
        out.push_back(pair[string, vector[int64_t]](type_name.encode(), dims))
    return out

def _xla_user_computation(str op_name, inputs, computation):
    """The results (a list of XLA tensors) of the xla_builder computation called on the
    XLA tensors `inputs`, one per parameter leaf."""
    inputs = list(inputs)
    return CallUserComputation(op_name.encode(), <PyObject*>inputs, computation.symbol.encode(),
                               computation.function_text.encode(),
                               _builder_shapes(computation.flat_parameter_shapes),
                               _builder_shapes(computation.flat_result_shapes))

def _xla_op_tensor_shape(tensor, device=''):
    """{'type': XLA element type name, 'sizes': dims} of the tensor as the device holds it."""
    cdef pair[string, vector[int64_t]] shape = BuilderShapeOf(<PyObject*>tensor)
    return {'type': shape.first.decode(), 'sizes': tuple(shape.second)}

# ---- sharing memory with other frameworks (torch_xla.utils.dlpack)

def _xla_host_view(tensor):
    """A CPU tensor over the memory of the XLA tensor's buffer (CPU device only)."""
    return HostViewOfXlaTensor(<PyObject*>tensor)

def _xla_from_host_memory(tensor, int device):
    """(XLA tensor on xla:device holding the CPU tensor's data, whether it shares its memory)."""
    cdef cbool shared = False
    result = XlaTensorFromHostMemory(<PyObject*>tensor, device, &shared)
    return result, shared

def _to_dlpack(tensor):
    """A DLPack capsule over the XLA tensor's buffer memory."""
    from torch.utils import dlpack
    return dlpack.to_dlpack(HostViewOfXlaTensor(<PyObject*>tensor))

def _from_dlpack(capsule, device=None):
    """An XLA tensor holding a DLPack capsule's data (sharing its memory where it can)."""
    from torch.utils import dlpack
    host = dlpack.from_dlpack(capsule)
    return _xla_from_host_memory(host, CurrentDevice() if device is None else int(device))[0]

def _unsafe_buffer_pointer(tensor):
    """The address of the XLA tensor's buffer memory (computing the tensor first if pending)."""
    return UnsafeBufferPointer(<PyObject*>tensor)

# ---- the profiler's trace events (runtime/trace_recorder.h)

def _xla_trace_start():
    """Starts recording trace events; False when a trace is being recorded already."""
    return StartRecording()

def _xla_trace_stop():
    """Stops recording: ([(name, start_ns, end_ns, thread, track, {arg: value})], the
    count of events left out beyond the bound on a trace)."""
    cdef int64_t dropped = 0
    cdef vector[TraceEvent] events = StopRecording(&dropped)
    out = []
    for e in events:
        out.append((e.name.decode(errors='replace'), e.start_ns, e.end_ns, e.thread,
                    e.track.decode(errors='replace'),
                    {k.decode(errors='replace'): v.decode(errors='replace') for k, v in e.args}))
    return out, dropped

def _xla_trace_recording():
    return Recording()

def _xla_trace_now_ns():
    """The trace events' clock (steady, as time.monotonic_ns())."""
    return NowNs()

def _xla_trace_record(str name, int64_t start_ns, int64_t end_ns, args=None):
    """Records a span of the calling thread while a trace is being recorded."""
    if not Recording():
        return
    cdef TraceEvent event
    event.name = name.encode()
    event.start_ns = start_ns
    event.end_ns = end_ns
    event.thread = CurrentThreadId()
    if args:
        for key, value in args.items():
            event.args.push_back(pair[string, string](str(key).encode(), str(value).encode()))
    Record(event)


# ---- SPMD ----------------------------------------------------------------------------

def _xla_use_spmd():
    """Turns SPMD mode on for the process: xla:0 then stands for every device, each
    graph is compiled once for all of them and tensors are laid out by their shardings."""
    UseSpmd()

def _xla_is_spmd():
    return IsSpmd()

class OpSharding(str):
    """An XLA sharding as torch_xla builds it: OpSharding(tile_assignment, group_assignment,
    replication_groups, sharding_type), the tile assignment a nested list of device ids
    (one level per tiled dimension), sharding_type a ShardingType value. It is the
    sharding's text (a str), which every entry point here takes."""

    def __new__(cls, tile_assignment, group_assignment=(), replication_groups=(), sharding_type=None):
        from torch_xla.distributed.spmd.hlo_sharding import op_sharding_text
        if sharding_type is None:
            return str.__new__(cls, str(tile_assignment))
        return str.__new__(cls, op_sharding_text(tile_assignment, group_assignment, replication_groups,
                                                 int(sharding_type)))


def _xla_mark_sharding(tensor, sharding):
    """Lays the tensor out over the devices by `sharding`, XLA's HloSharding text (or an
    OpSharding)."""
    MarkSharding(<PyObject*>tensor, str(sharding).encode())

def _xla_annotate_custom_sharding(tensor, sharding):
    """Lays the tensor's value out by `sharding` through a constraint in its graph,
    without moving its data now."""
    AnnotateCustomSharding(<PyObject*>tensor, str(sharding).encode())

def _mark_manual_sharding(tensor, sharding=None):
    """Marks a pending value {manual}: each device's value is its own piece (device data
    cannot be marked; `sharding`, when given, must be {manual})."""
    if sharding is not None and str(sharding) != '{manual}':
        raise RuntimeError(f'_mark_manual_sharding: expected the {{manual}} sharding, got {sharding}')
    MarkManualSharding(<PyObject*>tensor)

def _spmd_full_to_shard_shape(tensor):
    """The sharded tensor seen as each device's shard ({manual}, the shard's shape)."""
    return SpmdFullToShardShape(<PyObject*>tensor)

def _spmd_shard_to_full_shape(tensor, sharding, output_shape, output_dtype):
    """The manual tensor's per-device pieces as the global tensor of `output_shape` and
    `output_dtype`, laid out by `sharding`."""
    return SpmdShardToFullShape(<PyObject*>tensor, str(sharding).encode(), [int(d) for d in output_shape],
                                <PyObject*>output_dtype)

def _xla_spmd_all_reduce(str reduce_type, tensor, double scale, groups):
    """All-reduce between the devices' pieces of a manually sharded tensor, inside manual
    sharding; `groups` list device ordinals (empty: all devices), the result times `scale`."""
    return SpmdAllReduce(reduce_type.encode(), <PyObject*>tensor, scale,
                         [[int(d) for d in g] for g in groups])

def _xla_spmd_reduce_scatter(str reduce_type, tensor, double scale, int64_t scatter_dim, int64_t shard_count,
                             groups):
    """Reduce-scatter between the devices' pieces of a manually sharded tensor along
    `scatter_dim` into `shard_count` blocks (the group size), the result times `scale`."""
    return SpmdReduceScatter(reduce_type.encode(), <PyObject*>tensor, scale, scatter_dim, shard_count,
                             [[int(d) for d in g] for g in groups])

def _global_tensor_from_cpu_shards(shards, sharding, global_shape=None):
    """A sharded XLA tensor from one CPU shard per device (in device order, all of one
    shape: the padded shard), laid out by `sharding`; `global_shape` defaults to the
    shards' shape times the tiling (or theirs, replicated)."""
    cdef object listed = list(shards)
    has_shape = global_shape is not None
    return GlobalTensorFromCpuShards(<PyObject*>listed, str(sharding).encode(), has_shape,
                                     [int(d) for d in global_shape] if has_shape else [])

def _xla_clear_sharding(tensor):
    ClearSharding(<PyObject*>tensor)

def _get_xla_sharding_spec(tensor):
    """The tensor's sharding text; '' when it has none."""
    return ShardingSpec(<PyObject*>tensor).decode()

def _get_xla_sharding_specs(tensors):
    """The sharding text of each tensor ('' for none)."""
    return [ShardingSpec(<PyObject*>t).decode() for t in tensors]

def _get_xla_op_sharding(tensor):
    """The tensor's sharding as an OpSharding (its text); None when it has none."""
    text = ShardingSpec(<PyObject*>tensor).decode()
    return OpSharding(text) if text else None

def _get_local_shards(tensors):
    """Per tensor, each device's piece as torch_xla gives it: [(padded CPU data, device
    name)], in device order."""
    from torch_xla.distributed.spmd.xla_sharded_tensor import XLAShardedTensor
    return [[(s.data, s.shard_device) for s in XLAShardedTensor(t).local_shards] for t in tensors]

def _get_local_shard_replica_and_indices(tensors):
    """Per tensor, each device's [(replica id, indices)]: the indices a list of slices into
    the global tensor, or Ellipsis where the device holds it whole."""
    from torch_xla.distributed.spmd.xla_sharded_tensor import XLAShardedTensor
    return [[(s.replica_id, s.indices) for s in XLAShardedTensor(t).local_shards] for t in tensors]

def _load_local_shards(tensor, shards, devices):
    """Replaces the sharded tensor's data by one CPU piece per device (padded or not),
    the devices named as local_shards names them ('CPU:2') or by ordinal."""
    from torch_xla.distributed.spmd.xla_sharded_tensor import XLAShard, XLAShardedTensor
    XLAShardedTensor(tensor).load_local_shards_([XLAShard(d, None, dev, 0) for d, dev in zip(shards, devices)])

def _xla_local_shards(tensor):
    """[(CPU tensor, device ordinal)]: each device's shard without padding, by device."""
    return LocalShards(<PyObject*>tensor)

def _xla_load_local_shards(tensor, shards, devices):
    """Replaces the tensor's data by these per-device shards (CPU tensors)."""
    cdef object listed = list(shards)
    LoadLocalShards(<PyObject*>tensor, <PyObject*>listed, [int(d) for d in devices])

def _get_xla_sharding_type(tensor):
    """The kind of the tensor's sharding as torch_xla numbers it (ShardingType's value:
    0 replicated, 3 tiled, 5 partial, ...); None when it has none."""
    from torch_xla.distributed.spmd.hlo_sharding import sharding_type_from_text
    kind = sharding_type_from_text(ShardingSpec(<PyObject*>tensor).decode())
    return None if kind is None else int(kind)
