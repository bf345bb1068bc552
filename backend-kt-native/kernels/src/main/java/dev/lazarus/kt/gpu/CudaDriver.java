package dev.lazarus.kt.gpu;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * The few CUDA driver API entry points the GPU tier uses, bound through FFM to {@code libcuda.so.1}
 * (the driver library every NVIDIA driver installs; no toolkit needed at run time). Each call
 * checks its {@code CUresult}. Device pointers ({@code CUdeviceptr}) are {@code long}s.
 */
final class CudaDriver {

    private static final Linker LINKER = Linker.nativeLinker();

    private final MethodHandle cuInit;
    private final MethodHandle cuDeviceGetCount;
    private final MethodHandle cuDeviceGet;
    private final MethodHandle cuDeviceGetName;
    private final MethodHandle cuDeviceTotalMem;
    private final MethodHandle cuDevicePrimaryCtxRetain;
    private final MethodHandle cuDevicePrimaryCtxRelease;
    private final MethodHandle cuDevicePrimaryCtxSetFlags;
    private final MethodHandle cuCtxSetCurrent;
    private final MethodHandle cuModuleLoadData;
    private final MethodHandle cuModuleUnload;
    private final MethodHandle cuModuleGetFunction;
    private final MethodHandle cuMemAlloc;
    private final MethodHandle cuMemFree;
    private final MethodHandle cuMemAllocHost;
    private final MethodHandle cuMemFreeHost;
    private final MethodHandle cuMemHostRegister;
    private final MethodHandle cuMemHostUnregister;
    private final MethodHandle cuMemcpyHtoDAsync;
    private final MethodHandle cuMemcpyDtoHAsync;
    private final MethodHandle cuStreamCreate;
    private final MethodHandle cuStreamDestroy;
    private final MethodHandle cuStreamSynchronize;
    private final MethodHandle cuLaunchKernel;
    private final MethodHandle cuGetErrorString;
    private final MethodHandle cuEventCreate;
    private final MethodHandle cuEventRecord;
    private final MethodHandle cuEventSynchronize;
    private final MethodHandle cuEventDestroy;
    private final MethodHandle cuStreamWaitEvent;
    private final MethodHandle cuStreamBeginCapture;
    private final MethodHandle cuStreamEndCapture;
    private final MethodHandle cuGraphInstantiate;
    private final MethodHandle cuGraphDestroy;
    private final MethodHandle cuGraphLaunch;
    private final MethodHandle cuGraphExecDestroy;

    private CudaDriver(SymbolLookup lib) {
        cuInit = bind(lib, "cuInit", JAVA_INT);
        cuDeviceGetCount = bind(lib, "cuDeviceGetCount", ADDRESS);
        cuDeviceGet = bind(lib, "cuDeviceGet", ADDRESS, JAVA_INT);
        cuDeviceGetName = bind(lib, "cuDeviceGetName", ADDRESS, JAVA_INT, JAVA_INT);
        cuDeviceTotalMem = bind(lib, "cuDeviceTotalMem_v2", ADDRESS, JAVA_INT);
        cuDevicePrimaryCtxRetain = bind(lib, "cuDevicePrimaryCtxRetain", ADDRESS, JAVA_INT);
        cuDevicePrimaryCtxRelease = bind(lib, "cuDevicePrimaryCtxRelease_v2", JAVA_INT);
        cuDevicePrimaryCtxSetFlags = bind(lib, "cuDevicePrimaryCtxSetFlags_v2", JAVA_INT, JAVA_INT);
        cuCtxSetCurrent = bind(lib, "cuCtxSetCurrent", ADDRESS);
        cuModuleLoadData = bind(lib, "cuModuleLoadData", ADDRESS, ADDRESS);
        cuModuleUnload = bind(lib, "cuModuleUnload", ADDRESS);
        cuModuleGetFunction = bind(lib, "cuModuleGetFunction", ADDRESS, ADDRESS, ADDRESS);
        cuMemAlloc = bind(lib, "cuMemAlloc_v2", ADDRESS, JAVA_LONG);
        cuMemFree = bind(lib, "cuMemFree_v2", JAVA_LONG);
        cuMemAllocHost = bind(lib, "cuMemAllocHost_v2", ADDRESS, JAVA_LONG);
        cuMemFreeHost = bind(lib, "cuMemFreeHost", ADDRESS);
        cuMemHostRegister = bind(lib, "cuMemHostRegister_v2", ADDRESS, JAVA_LONG, JAVA_INT);
        cuMemHostUnregister = bind(lib, "cuMemHostUnregister", ADDRESS);
        cuMemcpyHtoDAsync = bind(lib, "cuMemcpyHtoDAsync_v2", JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS);
        cuMemcpyDtoHAsync = bind(lib, "cuMemcpyDtoHAsync_v2", ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS);
        cuStreamCreate = bind(lib, "cuStreamCreate", ADDRESS, JAVA_INT);
        cuStreamDestroy = bind(lib, "cuStreamDestroy_v2", ADDRESS);
        cuStreamSynchronize = bind(lib, "cuStreamSynchronize", ADDRESS);
        cuLaunchKernel = bind(lib, "cuLaunchKernel", ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT,
                JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
        cuGetErrorString = bind(lib, "cuGetErrorString", JAVA_INT, ADDRESS);
        cuEventCreate = bind(lib, "cuEventCreate", ADDRESS, JAVA_INT);
        cuEventRecord = bind(lib, "cuEventRecord", ADDRESS, ADDRESS);
        cuEventSynchronize = bind(lib, "cuEventSynchronize", ADDRESS);
        cuEventDestroy = bind(lib, "cuEventDestroy_v2", ADDRESS);
        cuStreamWaitEvent = bind(lib, "cuStreamWaitEvent", ADDRESS, ADDRESS, JAVA_INT);
        cuStreamBeginCapture = bind(lib, "cuStreamBeginCapture_v2", ADDRESS, JAVA_INT);
        cuStreamEndCapture = bind(lib, "cuStreamEndCapture", ADDRESS, ADDRESS);
        cuGraphInstantiate = bind(lib, "cuGraphInstantiateWithFlags", ADDRESS, ADDRESS, JAVA_LONG);
        cuGraphDestroy = bind(lib, "cuGraphDestroy", ADDRESS);
        cuGraphLaunch = bind(lib, "cuGraphLaunch", ADDRESS, ADDRESS);
        cuGraphExecDestroy = bind(lib, "cuGraphExecDestroy", ADDRESS);
    }

    /**
     * The driver library: {@code libcuda.so.1} from the loader's search path, unless the system property
     * {@code lazarus.cuda.library} names another file (a driver installed elsewhere; a fake one in tests).
     */
    static String library() {
        return System.getProperty("lazarus.cuda.library", "libcuda.so.1");
    }

    /** The driver, or empty with the reason when the library cannot be loaded here. */
    static Optional<CudaDriver> load(StringBuilder whyNot) {
        String library = library();
        try {
            SymbolLookup lib = SymbolLookup.libraryLookup(library, Arena.global());
            return Optional.of(new CudaDriver(lib));
        } catch (IllegalArgumentException | IllegalCallerException e) {
            whyNot.append(library).append(" not loadable: ").append(e.getMessage());
            return Optional.empty();
        }
    }

    private static MethodHandle bind(SymbolLookup lib, String name, java.lang.foreign.MemoryLayout... args) {
        MemorySegment symbol = lib.find(name).orElseThrow(
                () -> new IllegalArgumentException(library() + " has no " + name + " (driver too old?)"));
        return LINKER.downcallHandle(symbol, FunctionDescriptor.of(JAVA_INT, args));
    }

    // ---- calls; every one throws CudaException on a non-zero CUresult ----

    void init() {
        check("cuInit", call(cuInit, 0));
    }

    int deviceCount() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment n = a.allocate(JAVA_INT);
            check("cuDeviceGetCount", call(cuDeviceGetCount, n));
            return n.get(JAVA_INT, 0);
        }
    }

    int device(int ordinal) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment d = a.allocate(JAVA_INT);
            check("cuDeviceGet", call(cuDeviceGet, d, ordinal));
            return d.get(JAVA_INT, 0);
        }
    }

    String deviceName(int device) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment name = a.allocate(256);
            check("cuDeviceGetName", call(cuDeviceGetName, name, 256, device));
            return name.getString(0);
        }
    }

    long deviceMemory(int device) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment bytes = a.allocate(JAVA_LONG);
            check("cuDeviceTotalMem", call(cuDeviceTotalMem, bytes, device));
            return bytes.get(JAVA_LONG, 0);
        }
    }

    MemorySegment retainPrimaryContext(int device) {
        return out("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain, device);
    }

    /** {@code CU_CTX_SCHED_BLOCKING_SYNC}: a thread waiting for the GPU sleeps instead of spinning. */
    static final int SCHED_BLOCKING_SYNC = 0x4;

    /** Flags of the device's primary context (scheduling: how a host thread waits for the GPU). */
    void setPrimaryContextFlags(int device, int flags) {
        check("cuDevicePrimaryCtxSetFlags", call(cuDevicePrimaryCtxSetFlags, device, flags));
    }

    void releasePrimaryContext(int device) {
        check("cuDevicePrimaryCtxRelease", call(cuDevicePrimaryCtxRelease, device));
    }

    /** Makes {@code context} current on the calling thread (driver contexts are per thread). */
    void setCurrent(MemorySegment context) {
        int r;
        try {
            r = (int) cuCtxSetCurrent.invokeExact(context);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuCtxSetCurrent", r);
    }

    MemorySegment loadModule(MemorySegment image) {
        return out("cuModuleLoadData", cuModuleLoadData, image);
    }

    void unloadModule(MemorySegment module) {
        check("cuModuleUnload", call(cuModuleUnload, module));
    }

    MemorySegment function(MemorySegment module, String name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment f = a.allocate(ADDRESS);
            check("cuModuleGetFunction(" + name + ")", call(cuModuleGetFunction, f, module, a.allocateFrom(name)));
            return f.get(ADDRESS, 0);
        }
    }

    long malloc(long bytes) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(JAVA_LONG);
            check("cuMemAlloc(" + bytes + ")", call(cuMemAlloc, p, bytes));
            return p.get(JAVA_LONG, 0);
        }
    }

    void free(long devicePointer) {
        check("cuMemFree", call(cuMemFree, devicePointer));
    }

    /** Page-locked host memory (what asynchronous copies need to really be asynchronous). */
    MemorySegment mallocHost(long bytes) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ADDRESS);
            check("cuMemAllocHost(" + bytes + ")", call(cuMemAllocHost, p, bytes));
            return p.get(ADDRESS, 0).reinterpret(bytes);
        }
    }

    void freeHost(MemorySegment host) {
        check("cuMemFreeHost", call(cuMemFreeHost, host));
    }

    /** {@code CU_MEMHOSTREGISTER_READ_ONLY}: the device only reads the range (what a read-only file mapping allows). */
    static final int HOST_REGISTER_READ_ONLY = 0x08;

    /** Page-locks existing host memory (page-aligned here), so copies from it are direct, asynchronous DMA. */
    void registerHost(MemorySegment range, int flags) {
        check("cuMemHostRegister(" + range.byteSize() + ")", call(cuMemHostRegister, range, range.byteSize(), flags));
    }

    void unregisterHost(MemorySegment range) {
        check("cuMemHostUnregister", call(cuMemHostUnregister, range));
    }

    void copyToDevice(long dst, MemorySegment src, long bytes, MemorySegment stream) {
        int r;
        try {
            r = (int) cuMemcpyHtoDAsync.invokeExact(dst, src, bytes, stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuMemcpyHtoDAsync", r);
    }

    void copyToHost(MemorySegment dst, long src, long bytes, MemorySegment stream) {
        int r;
        try {
            r = (int) cuMemcpyDtoHAsync.invokeExact(dst, src, bytes, stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuMemcpyDtoHAsync", r);
    }

    /** A stream that does not synchronise with the legacy default stream. */
    MemorySegment createStream() {
        return out("cuStreamCreate", cuStreamCreate, 1 /* CU_STREAM_NON_BLOCKING */);
    }

    void destroyStream(MemorySegment stream) {
        check("cuStreamDestroy", call(cuStreamDestroy, stream));
    }

    void synchronize(MemorySegment stream) {
        int r;
        try {
            r = (int) cuStreamSynchronize.invokeExact(stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuStreamSynchronize", r);
    }

    /** An event without timing (the cheapest kind): a point in a stream the host can wait for. */
    MemorySegment createEvent() {
        return out("cuEventCreate", cuEventCreate, 2 /* CU_EVENT_DISABLE_TIMING */);
    }

    void destroyEvent(MemorySegment event) {
        check("cuEventDestroy", call(cuEventDestroy, event));
    }

    /** Marks the point {@code stream} has reached: {@link #synchronizeEvent} waits for the work before it only. */
    void record(MemorySegment event, MemorySegment stream) {
        int r;
        try {
            r = (int) cuEventRecord.invokeExact(event, stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuEventRecord", r);
    }

    /** Work queued on {@code stream} from now on waits, on the device, for the point {@code event} recorded. */
    void waitEvent(MemorySegment stream, MemorySegment event) {
        check("cuStreamWaitEvent", call(cuStreamWaitEvent, stream, event, 0));
    }

    void synchronizeEvent(MemorySegment event) {
        int r;
        try {
            r = (int) cuEventSynchronize.invokeExact(event);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuEventSynchronize", r);
    }

    /**
     * From now on the work queued on {@code stream} by this thread is recorded into a graph, not run
     * ({@code CU_STREAM_CAPTURE_MODE_THREAD_LOCAL}: other threads' CUDA calls are not affected).
     */
    void beginCapture(MemorySegment stream) {
        check("cuStreamBeginCapture", call(cuStreamBeginCapture, stream, 1));
    }

    /** Ends {@link #beginCapture}: the recorded graph (free it with {@link #destroyGraph}). */
    MemorySegment endCapture(MemorySegment stream) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment graph = a.allocate(ADDRESS);
            check("cuStreamEndCapture", call(cuStreamEndCapture, stream, graph));
            return graph.get(ADDRESS, 0);
        }
    }

    /** An executable copy of {@code graph} (kernel arguments as captured): launch it with {@link #launchGraph}. */
    MemorySegment instantiate(MemorySegment graph) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment exec = a.allocate(ADDRESS);
            check("cuGraphInstantiate", call(cuGraphInstantiate, exec, graph, 0L));
            return exec.get(ADDRESS, 0);
        }
    }

    void destroyGraph(MemorySegment graph) {
        check("cuGraphDestroy", call(cuGraphDestroy, graph));
    }

    /** Queues the whole graph on {@code stream}: one driver call for all its kernels. */
    void launchGraph(MemorySegment exec, MemorySegment stream) {
        int r;
        try {
            r = (int) cuGraphLaunch.invokeExact(exec, stream);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuGraphLaunch", r);
    }

    void destroyGraphExec(MemorySegment exec) {
        check("cuGraphExecDestroy", call(cuGraphExecDestroy, exec));
    }

    /** {@code params} is an array of pointers, one to each kernel argument's value. */
    void launch(MemorySegment function, int gridX, int gridY, int blockX, int sharedBytes, MemorySegment stream,
                MemorySegment params) {
        int r;
        try {
            r = (int) cuLaunchKernel.invokeExact(function, gridX, gridY, 1, blockX, 1, 1, sharedBytes, stream, params,
                    MemorySegment.NULL);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        check("cuLaunchKernel", r);
    }

    private MemorySegment out(String what, MethodHandle h, Object arg) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ADDRESS);
            check(what, call(h, p, arg));
            return p.get(ADDRESS, 0);
        }
    }

    /** For the calls made once (setup, allocation): not worth an exact-typed invocation each. */
    private static int call(MethodHandle h, Object... args) {
        try {
            return (int) h.invokeWithArguments(args);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    private void check(String what, int result) {
        if (result != 0) {
            String name = "CUresult " + result;
            try (Arena a = Arena.ofConfined()) {
                MemorySegment p = a.allocate(ADDRESS);
                if (call(cuGetErrorString, result, p) == 0) {
                    name = p.get(ADDRESS, 0).reinterpret(256).getString(0);
                }
            }
            throw new CudaException(what + " failed: " + name + " (" + result + ")");
        }
    }
}
