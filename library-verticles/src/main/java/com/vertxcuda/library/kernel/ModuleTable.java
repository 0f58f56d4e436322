package com.vertxcuda.library.kernel;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.kernel.ModuleHandle;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The modules loaded on one context, and where module handles are validated: a foreign or missing
 * handle is BAD_REQUEST, an earlier generation STALE_HANDLE, an unknown or unloaded id NOT_FOUND, a
 * wrong token FORBIDDEN. Used on the submission thread only.
 */
final class ModuleTable<M> {

  private final String node;
  private final int device;
  private final long generation;
  private final Map<Long, Entry<M>> modules = new HashMap<>();
  private long nextId = 1;

  private static final class Entry<M> {
    final ModuleHandle handle;
    final M module;
    final String owner;

    Entry(ModuleHandle handle, M module, String owner) {
      this.handle = handle;
      this.module = module;
      this.owner = owner;
    }
  }

  ModuleTable(String node, int device, long generation) {
    this.node = node;
    this.device = device;
    this.generation = generation;
  }

  /** Records a module loaded for {@code owner} (the node that asked; null: the device). */
  ModuleHandle add(M module, String owner) {
    ModuleHandle h = ModuleHandle.issue(node, device, generation, nextId++);
    modules.put(h.id(), new Entry<>(h, module, owner));
    return h;
  }

  /** Removes and returns every module {@code owner} loaded. */
  List<M> removeOwnedBy(String owner) {
    List<M> owned = new ArrayList<>();
    modules.values().removeIf(e -> {
      if (owner.equals(e.owner)) {
        owned.add(e.module);
        return true;
      }
      return false;
    });
    return owned;
  }

  M resolve(ModuleHandle h) {
    if (h == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "module is missing");
    }
    if (!node.equals(h.node()) || device != h.device()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "module belongs to device " + h.node() + "/" + h.device()
        + ", not " + node + "/" + device);
    }
    if (h.generation() != generation) {
      throw new CudaException(FailureCode.STALE_HANDLE, "module was loaded by generation " + h.generation()
        + "; the device is at generation " + generation);
    }
    Entry<M> e = modules.get(h.id());
    if (e == null) {
      throw new CudaException(FailureCode.NOT_FOUND, "module #" + h.id() + " does not exist or was unloaded");
    }
    if (e.handle.tokenHigh() != h.tokenHigh() || e.handle.tokenLow() != h.tokenLow()) {
      throw new CudaException(FailureCode.FORBIDDEN, "module handle does not carry module #" + h.id() + "'s token");
    }
    return e.module;
  }

  M remove(ModuleHandle h) {
    M m = resolve(h);
    modules.remove(h.id());
    return m;
  }

  List<M> drain() {
    List<M> all = new ArrayList<>();
    modules.values().forEach(e -> all.add(e.module));
    modules.clear();
    return all;
  }
}
