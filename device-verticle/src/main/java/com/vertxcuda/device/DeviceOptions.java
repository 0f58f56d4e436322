package com.vertxcuda.device;

import com.vertxcuda.Library;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** How a {@link DeviceVerticle} runs its device. */
@DataObject
@JsonGen(publicConverter = false)
public class DeviceOptions {

  public static final int DEFAULT_DEVICE = 0;
  public static final BackendKind DEFAULT_BACKEND = BackendKind.AUTO;
  public static final Isolation DEFAULT_ISOLATION = Isolation.AUTO;
  public static final int DEFAULT_PENDING_QUEUE_CAPACITY = 1024;
  public static final int DEFAULT_MAX_IN_FLIGHT = 65_536;
  public static final long DEFAULT_MEMORY_LIMIT = 0;
  public static final long DEFAULT_REQUEST_TIMEOUT = 60_000;
  public static final int DEFAULT_SUBMISSION_SPIN = -1;
  public static final int DEFAULT_CALLER_WAKE = 0;
  public static final int DEFAULT_RESTART_LIMIT = 5;
  public static final long DEFAULT_RESTART_WINDOW = 60_000;
  public static final long DEFAULT_REGISTRY_REFRESH = 5_000;
  /** Default shortest time between two registry publications of a device whose load changed: 100 ms. */
  public static final long DEFAULT_REGISTRY_MIN_INTERVAL = 100;
  public static final long DEFAULT_HOST_MEMORY = 1L << 30;
  public static final long DEFAULT_HEARTBEAT_INTERVAL = 1_000;
  /** Default time between two reads of the GPU's NVML meters: 1000 ms. */
  public static final long DEFAULT_GPU_METERS_INTERVAL = 1_000;
  /**
   * Default shared region: 64 KiB under 2 GiB, the most one mapping takes. Page-locked only as it is
   * used; three quarters of it may be lent at once, so a 1 GiB download or transfer buffer fits whole.
   */
  public static final long DEFAULT_SHARED_MEMORY_SIZE = (1L << 31) - (1L << 16);
  /** By default the shared region's pages are taken as transfers touch them. */
  public static final boolean DEFAULT_SHARED_MEMORY_RESERVED = false;
  public static final long DEFAULT_DEVICE_HOST_START_TIMEOUT = 60_000;
  public static final boolean DEFAULT_SPARE_DEVICE_HOST = true;
  public static final boolean DEFAULT_DEVICE_HOST_CLASS_ARCHIVE = true;
  public static final long DEFAULT_HEARTBEAT_TIMEOUT = 10_000;
  public static final boolean DEFAULT_PEER_COPY = true;
  /** Default connections the bulk side channel serves at once: 4,096. */
  public static final int DEFAULT_BULK_MAX_CONNECTIONS = 4096;
  /** Default connections the bulk side channel serves at once from one peer address: 1,024. */
  public static final int DEFAULT_BULK_MAX_CONNECTIONS_PER_PEER = 1024;
  /** Default bytes of uploads the bulk side channel holds at once: 256 MiB. */
  public static final long DEFAULT_BULK_HELD_BYTES = 256L << 20;
  /**
   * Default transfer budget: 4 GiB, room for two of the largest downloads (just under 2 GiB, the
   * most one Buffer holds) lent at once.
   */
  public static final long DEFAULT_TRANSFER_BUDGET = 4L << 30;
  /** Default per-node transfer quota: 0, none (the device's budget alone bounds each node). */
  public static final long DEFAULT_OWNER_TRANSFER_QUOTA = 0;
  /** Default most recorded pipelines a device holds at once, all owners together: 4,096. */
  public static final int DEFAULT_MAX_PIPELINES = 4096;
  /** Default most recorded pipelines one node holds on a device at once: 1,024. */
  public static final int DEFAULT_MAX_PIPELINES_PER_OWNER = 1024;

  private int device = DEFAULT_DEVICE;
  private String node;
  private BackendKind backend = DEFAULT_BACKEND;
  private Isolation isolation = DEFAULT_ISOLATION;
  private int pendingQueueCapacity = DEFAULT_PENDING_QUEUE_CAPACITY;
  private int maxInFlight = DEFAULT_MAX_IN_FLIGHT;
  private long memoryLimit = DEFAULT_MEMORY_LIMIT;
  private List<Library> libraries = new ArrayList<>(Arrays.asList(Library.values()));
  private int submissionSpin = DEFAULT_SUBMISSION_SPIN;
  private int callerWake = DEFAULT_CALLER_WAKE;
  private long requestTimeout = DEFAULT_REQUEST_TIMEOUT;
  private int restartLimit = DEFAULT_RESTART_LIMIT;
  private long restartWindow = DEFAULT_RESTART_WINDOW;
  private long registryRefresh = DEFAULT_REGISTRY_REFRESH;
  private long registryMinInterval = DEFAULT_REGISTRY_MIN_INTERVAL;
  private long ownerMemoryQuota;
  private long transferBudget = DEFAULT_TRANSFER_BUDGET;
  private long ownerTransferQuota = DEFAULT_OWNER_TRANSFER_QUOTA;
  private long hostMemory = DEFAULT_HOST_MEMORY;
  private boolean faultInjection;
  private boolean measurePhases;
  private long gpuMetersInterval = DEFAULT_GPU_METERS_INTERVAL;
  private long openDelay;
  private long heartbeatInterval = DEFAULT_HEARTBEAT_INTERVAL;
  private long heartbeatTimeout = DEFAULT_HEARTBEAT_TIMEOUT;
  private long sharedMemorySize = DEFAULT_SHARED_MEMORY_SIZE;
  private boolean sharedMemoryReserved = DEFAULT_SHARED_MEMORY_RESERVED;
  private long deviceHostStartTimeout = DEFAULT_DEVICE_HOST_START_TIMEOUT;
  private List<String> deviceHostJvmOptions = new ArrayList<>();
  private boolean spareDeviceHost = DEFAULT_SPARE_DEVICE_HOST;
  private boolean deviceHostClassArchive = DEFAULT_DEVICE_HOST_CLASS_ARCHIVE;
  private String deviceHostClassArchiveDirectory;
  private String deviceHostClassPath;
  private String cudaLibraryPath;
  private boolean peerCopy = DEFAULT_PEER_COPY;
  private int bulkMaxConnections = DEFAULT_BULK_MAX_CONNECTIONS;
  private int bulkMaxConnectionsPerPeer = DEFAULT_BULK_MAX_CONNECTIONS_PER_PEER;
  private long bulkHeldBytes = DEFAULT_BULK_HELD_BYTES;
  private int maxPipelines = DEFAULT_MAX_PIPELINES;
  private int maxPipelinesPerOwner = DEFAULT_MAX_PIPELINES_PER_OWNER;
  private JsonObject libraryOptions = new JsonObject();

  public DeviceOptions() {
  }

  public DeviceOptions(DeviceOptions other) {
    this(other.toJson());
  }

  public DeviceOptions(JsonObject json) {
    this();
    DeviceOptionsConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    DeviceOptionsConverter.toJson(this, json);
    return json;
  }

  /** Device index (CUDA ordinal) this verticle serves. */
  public int getDevice() { return device; }
  public DeviceOptions setDevice(int device) { this.device = device; return this; }

  /** Node word of the addresses; {@code null} means the cluster node id, or "local" unclustered. */
  public String getNode() { return node; }
  public DeviceOptions setNode(String node) { this.node = node; return this; }

  /** Backend: auto (cuda where a GPU is usable), cuda or host. */
  public BackendKind getBackend() { return backend; }
  public DeviceOptions setBackend(BackendKind backend) { this.backend = backend; return this; }

  /** Where the context tier runs: in-process or in a supervised device-host process. */
  public Isolation getIsolation() { return isolation; }
  public DeviceOptions setIsolation(Isolation isolation) { this.isolation = isolation; return this; }

  /** Requests held while the context is (re)built; past this they fail at once with QUEUE_FULL. */
  public int getPendingQueueCapacity() { return pendingQueueCapacity; }
  public DeviceOptions setPendingQueueCapacity(int v) { this.pendingQueueCapacity = v; return this; }

  /**
   * Requests forwarded to the context and not yet answered (a coalesced batch counts once); past
   * this, a request fails at once with QUEUE_FULL, so an overloaded device answers quickly and its
   * memory stays bounded.
   */
  public int getMaxInFlight() { return maxInFlight; }
  public DeviceOptions setMaxInFlight(int v) { this.maxInFlight = v; return this; }

  /**
   * Most bytes of live buffers plus what libraries hold outside buffers (FFT plans and their work
   * areas, loaded modules: {@code DeviceStats.libraryBytes}); 0 means the device's memory. Past
   * it, OUT_OF_MEMORY.
   */
  public long getMemoryLimit() { return memoryLimit; }
  public DeviceOptions setMemoryLimit(long v) { this.memoryLimit = v; return this; }

  /**
   * Most bytes of buffers one node may hold on this device (buffers it allocated and has not freed
   * or handed to the device with {@code keep}); 0 means no quota. Past it, OUT_OF_MEMORY naming the
   * quota. The node is the one the event bus says sent the request.
   */
  public long getOwnerMemoryQuota() { return ownerMemoryQuota; }
  public DeviceOptions setOwnerMemoryQuota(long v) { this.ownerMemoryQuota = v; return this; }

  /**
   * Most bytes of host memory the device lends to users at once, in bytes: downloads it hands back
   * (over pinned, pooled or shared-region memory), the landing buffers of downloads too large to
   * lend at once, and transfer buffers, each counted from its request's admission until its memory
   * returns (released, or collected once unreachable). Past it a download is answered QUEUE_FULL at
   * once and {@code allocateTransferBuffer} throws QUEUE_FULL; a typed client in this JVM lands a
   * download that finds no room in its own heap instead, in arrays of about 32 MiB made on its copy
   * threads (one composite Buffer over them).
   */
  public long getTransferBudget() { return transferBudget; }
  public DeviceOptions setTransferBudget(long v) { this.transferBudget = v; return this; }

  /**
   * Most bytes of the transfer budget ({@link #getTransferBudget()}) one node may hold at once, in
   * bytes; 0 means no quota. Past it, QUEUE_FULL naming the quota. The node is the one the event
   * bus says sent the request (this node for callers in this JVM).
   */
  public long getOwnerTransferQuota() { return ownerTransferQuota; }
  public DeviceOptions setOwnerTransferQuota(long v) { this.ownerTransferQuota = v; return this; }

  /** Library verticles deployed with each context. */
  public List<Library> getLibraries() { return libraries; }
  public DeviceOptions setLibraries(List<Library> libraries) { this.libraries = libraries; return this; }

  /**
   * How long a hand-off thread on the request path (the context's submission thread, the link's
   * reader, the cuda completion thread) spins for more work before it parks, in µs; -1 picks 200 µs
   * on hosts with 8 or more cores, 50 µs on 4 to 7, and 0 (park at once) on smaller ones, where a
   * spinning thread takes a core from the event loops. With 0 the cuda completion thread, which the
   * GPU cannot wake, still yields at every step while work is pending (up to 20 ms), rather than
   * poll on a timer.
   */
  public int getSubmissionSpin() { return submissionSpin; }
  public DeviceOptions setSubmissionSpin(int v) { this.submissionSpin = v; return this; }

  /**
   * While a request made on an event loop in this JVM is unanswered, that loop wakes itself this
   * often, in µs, so the answer finds it in a light sleep rather than a deep one; 0 (the default):
   * never, as its gain over a sleeping loop is unmeasured on a GPU host. Stops after 20 ms of a
   * request unanswered (one late wake-up is small against the wait then). Only where Vert.x runs its native transport
   * ({@code VertxOptions.setPreferNativeTransport}): the NIO loop cannot sleep less than a
   * millisecond without spinning, so there the option is off (with one warning).
   */
  public int getCallerWake() { return callerWake; }
  public DeviceOptions setCallerWake(int v) { this.callerWake = v; return this; }

  /**
   * How long a request may take when its sender gave no deadline, in ms; a request past its
   * deadline is answered TIMEOUT and, if it has not reached the GPU yet, never does.
   */
  public long getRequestTimeout() { return requestTimeout; }
  public DeviceOptions setRequestTimeout(long v) { this.requestTimeout = v; return this; }

  /** Context rebuilds allowed within {@link #getRestartWindow()}; past it the device is LOST. */
  public int getRestartLimit() { return restartLimit; }
  public DeviceOptions setRestartLimit(int v) { this.restartLimit = v; return this; }

  /** The window of the restart budget, in ms. */
  public long getRestartWindow() { return restartWindow; }
  public DeviceOptions setRestartWindow(long v) { this.restartWindow = v; return this; }

  /** How often the device refreshes its registry entry, in ms (entries expire after 3 periods). */
  public long getRegistryRefresh() { return registryRefresh; }
  public DeviceOptions setRegistryRefresh(long v) { this.registryRefresh = v; return this; }

  /**
   * The shortest time between two registry publications, in ms: the device publishes its entry
   * when its state, generation or load changes, at most this often, so placement sees load as it is.
   */
  public long getRegistryMinInterval() { return registryMinInterval; }
  public DeviceOptions setRegistryMinInterval(long v) { this.registryMinInterval = v; return this; }

  /** Device memory the host backend pretends to have, in bytes. */
  public long getHostMemory() { return hostMemory; }
  public DeviceOptions setHostMemory(long v) { this.hostMemory = v; return this; }

  /** Accept fault-injection requests (host backend only; for tests and drills). */
  public boolean isFaultInjection() { return faultInjection; }
  public DeviceOptions setFaultInjection(boolean v) { this.faultInjection = v; return this; }

  /**
   * Measure where each request's time goes (queue, stream wait, GPU or copy; {@code RequestPhases}),
   * for the request listener and the device's spans. Off by default, so that nothing is timed; a
   * device turns it on by itself where its Vert.x has a tracer or its request listener asks for
   * phases ({@code RequestListener#wantsPhases}).
   */
  public boolean isMeasurePhases() { return measurePhases; }
  public DeviceOptions setMeasurePhases(boolean v) { this.measurePhases = v; return this; }

  /**
   * Time between two reads of the GPU's own meters from NVIDIA's driver (NVML: utilisation, memory,
   * power, energy, temperature, clocks, throttle reasons, ECC errors; XID errors are heard as they
   * come), in ms; 0 reads none. They are read on a thread of their own, by the node that serves the
   * device, and answered in {@code DeviceStats.getGpu()}; without NVML (no driver, the host backend)
   * there are none.
   */
  public long getGpuMetersInterval() { return gpuMetersInterval; }
  public DeviceOptions setGpuMetersInterval(long v) {
    if (v < 0) {
      throw new IllegalArgumentException("gpuMetersInterval must be 0 (off) or more, not " + v);
    }
    this.gpuMetersInterval = v;
    return this;
  }

  /**
   * Time added to opening each context, in ms, as a slow cuInit would take, on any backend (for tests
   * of the pending queue; honoured only with {@link #isFaultInjection()}).
   */
  public long getOpenDelay() { return openDelay; }
  public DeviceOptions setOpenDelay(long v) { this.openDelay = v; return this; }

  /** How often the device tier checks that its context still answers, in ms. */
  public long getHeartbeatInterval() { return heartbeatInterval; }
  public DeviceOptions setHeartbeatInterval(long v) { this.heartbeatInterval = v; return this; }

  /** A context that has not answered a heartbeat within this many ms is treated as lost. */
  public long getHeartbeatTimeout() { return heartbeatTimeout; }
  public DeviceOptions setHeartbeatTimeout(long v) { this.heartbeatTimeout = v; return this; }

  /**
   * Bytes of the shared-memory region between a device verticle and its device host (process
   * isolation). A device host does not start where /dev/shm has less room than this; its pages are
   * taken as transfers first touch them (see {@link #isSharedMemoryReserved()}).
   */
  public long getSharedMemorySize() { return sharedMemorySize; }
  public DeviceOptions setSharedMemorySize(long v) { this.sharedMemorySize = v; return this; }

  /**
   * Take the whole shared region from /dev/shm as each device host starts (process isolation), so
   * a /dev/shm that fills up later can never fail a transfer (a fault on a page first touched while
   * serving): each device host, the spare too, then holds {@link #getSharedMemorySize()} bytes of
   * shared memory (RAM) for its life, and its start writes that many zeros. Off, the start only
   * checks that /dev/shm has room for the region then.
   */
  public boolean isSharedMemoryReserved() { return sharedMemoryReserved; }
  public DeviceOptions setSharedMemoryReserved(boolean v) { this.sharedMemoryReserved = v; return this; }

  /** How long a device host may take to start and report ready, in ms (process isolation). */
  public long getDeviceHostStartTimeout() { return deviceHostStartTimeout; }
  public DeviceOptions setDeviceHostStartTimeout(long v) { this.deviceHostStartTimeout = v; return this; }

  /** Extra JVM options of the device-host process, e.g. -Xmx (process isolation). */
  public List<String> getDeviceHostJvmOptions() { return deviceHostJvmOptions; }
  public DeviceOptions setDeviceHostJvmOptions(List<String> v) { this.deviceHostJvmOptions = v; return this; }

  /**
   * Keep a spare device host started and ready for the next generation (process isolation), so a
   * lost one is replaced in milliseconds instead of a process start; costs one more process and its
   * context's device memory.
   */
  public boolean isSpareDeviceHost() { return spareDeviceHost; }
  public DeviceOptions setSpareDeviceHost(boolean v) { this.spareDeviceHost = v; return this; }

  /**
   * Start device hosts from a class-data archive of their own classes (AppCDS, process isolation):
   * made once per Java runtime and class path by a low-priority training run after a first device
   * host is ready, it takes about a quarter off each later start, a recovery without a spare above
   * all. Off, device hosts load their classes from the jars every time.
   */
  public boolean isDeviceHostClassArchive() { return deviceHostClassArchive; }
  public DeviceOptions setDeviceHostClassArchive(boolean v) { this.deviceHostClassArchive = v; return this; }

  /**
   * The folder of the device hosts' class-data archives; {@code null} means
   * {@code vertx-cuda-cds-<uid>} in java.io.tmpdir. Created owner-only; one another user could
   * write to is not used.
   */
  public String getDeviceHostClassArchiveDirectory() { return deviceHostClassArchiveDirectory; }
  public DeviceOptions setDeviceHostClassArchiveDirectory(String v) { this.deviceHostClassArchiveDirectory = v; return this; }

  /**
   * The class path device hosts run on (process isolation), entries separated by the platform's
   * path separator; {@code null} means this JVM's (or, where the toolkit was loaded by a class loader
   * of its own, that loader's). Set it where the application's class path holds what a device host
   * must not load, or to give device hosts a class path of jars only: a class-data archive
   * ({@link #isDeviceHostClassArchive()}) is made only for one without non-empty folders.
   */
  public String getDeviceHostClassPath() { return deviceHostClassPath; }
  public DeviceOptions setDeviceHostClassPath(String v) { this.deviceHostClassPath = v; return this; }

  /**
   * Copy straight between this device and another whose context shares its process (in-process
   * isolation, same backend): peer to peer on cuda where the devices allow it, staged by the driver
   * otherwise. Off, such copies are staged through the client's JVM as between processes or nodes.
   */
  public boolean isPeerCopy() { return peerCopy; }
  public DeviceOptions setPeerCopy(boolean v) { this.peerCopy = v; return this; }

  /**
   * Most recorded pipelines the device holds at once, all owners together (a count: a pipeline's
   * graph is the driver's memory, which CUDA does not report, so it is not charged to
   * {@link #getMemoryLimit()}); past it, recording fails with QUEUE_FULL until one is released.
   */
  public int getMaxPipelines() { return maxPipelines; }
  public DeviceOptions setMaxPipelines(int v) { this.maxPipelines = v; return this; }

  /**
   * Most recorded pipelines one node (the one the event bus says sent the recording) holds on the
   * device at once; past it, recording fails with QUEUE_FULL. A node's pipelines are released when
   * it leaves the cluster, as its buffers are freed.
   */
  public int getMaxPipelinesPerOwner() { return maxPipelinesPerOwner; }
  public DeviceOptions setMaxPipelinesPerOwner(int v) { this.maxPipelinesPerOwner = v; return this; }

  /** A folder searched first for CUDA libraries (before CUDA_HOME, /usr/local/cuda, the linker cache). */
  public String getCudaLibraryPath() { return cudaLibraryPath; }
  public DeviceOptions setCudaLibraryPath(String v) { this.cudaLibraryPath = v; return this; }

  /**
   * Settings of each library verticle, keyed by library suffix ({@code "blas"}: BlasOptions,
   * {@code "fft"}: FftOptions, {@code "kernel"}: {@code ptxCacheSize}, {@code ptxCacheDirectory});
   * each value is that library's options as JSON. Empty means every default.
   */
  public JsonObject getLibraryOptions() { return libraryOptions; }
  public DeviceOptions setLibraryOptions(JsonObject v) { this.libraryOptions = v == null ? new JsonObject() : v; return this; }

  /**
   * Connections the node's bulk side channel serves at once (clustered); past it a new one is answered
   * QUEUE_FULL and closed. The side channel is shared by the node's devices: the first deployed sets it.
   */
  public int getBulkMaxConnections() { return bulkMaxConnections; }
  public DeviceOptions setBulkMaxConnections(int v) { this.bulkMaxConnections = v; return this; }

  /**
   * Connections the node's bulk side channel serves at once from one peer address (clustered); past it
   * a new one is answered QUEUE_FULL and closed. The first device deployed sets it.
   */
  public int getBulkMaxConnectionsPerPeer() { return bulkMaxConnectionsPerPeer; }
  public DeviceOptions setBulkMaxConnectionsPerPeer(int v) { this.bulkMaxConnectionsPerPeer = v; return this; }

  /**
   * Bytes of uploads the node's bulk side channel holds at once, received and not yet in a device, in
   * bytes (clustered); an upload that would go past it is answered QUEUE_FULL. Each upload takes up to
   * four of its segments (8 MiB each at most). The first device deployed sets it.
   */
  public long getBulkHeldBytes() { return bulkHeldBytes; }
  public DeviceOptions setBulkHeldBytes(long v) { this.bulkHeldBytes = v; return this; }
}
