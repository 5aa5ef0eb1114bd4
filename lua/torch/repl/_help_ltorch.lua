--[[
  torch.repl._help_ltorch — `?name` help for ltorch's own functions: the names ltorch binds
  that PyTorch documents nowhere (torch.scope, torch.collect, x:describe, x:free, ...) or
  has without a docstring while ltorch implements them in Lua (torch.is_autocast_enabled,
  torch.Size, ...). Written by hand, from what each function does in lua/torch (the file is
  named in each entry's comment); tools/gen_help.py does not touch it.

  Same entry shape as the generated torch.repl._help_gen:
      name -> { sig = {calling forms}, doc = "summary", args = { {name, type, text}, ... },
                src = "ltorch" }
  torch.repl.docs merges it in (a PyTorch entry of the same name wins) and prints
  "(ltorch's own documentation)" under it. When a function here changes, change its entry;
  spec/repl/help_spec.lua checks each name is still bound.
]]
local function e(sig, doc, args)
  return { sig = type(sig) == "table" and sig or { sig }, doc = doc, args = args or {}, src = "ltorch" }
end

return {
  -- memory (lua/torch/_memory.lua, lua/torch/_scope.lua, lua/torch/init.lua, lua/torch/_tensor.lua)
  ["torch.scope"] = e("torch.scope(fn, ...) -> fn's results",
    "Runs fn(...) and frees every tensor created inside it that fn does not return (a returned tensor, "
      .. "or one in a returned table, is kept and handed to the enclosing scope). Errors propagate "
      .. "after the release. Scopes nest. Use it around a training step or a loop body to release "
      .. "intermediate tensors at once instead of waiting for Lua's garbage collector.",
    { { "fn", "function", "the code to run; its return values are returned." },
      { "...", "any", "arguments passed to fn." } }),
  ["torch.free"] = e("torch.free(x)",
    "Releases tensor x's memory now (the same as x:free()); x then reports x:is_freed() and "
      .. "using it is an error. Releasing a freed tensor again does nothing.",
    { { "x", "Tensor", "the tensor to release." } }),
  ["torch.collect"] = e("torch.collect()",
    "A full garbage collection of tensors Lua no longer references, then the blocks ltorch's "
      .. "allocator keeps for reuse (large ones, and this thread's small ones) and the malloc heap's "
      .. "free memory go back to the system."),
  ["torch.memory_stats"] = e("torch.memory_stats() -> table",
    "ltorch's memory counters: live_handles (tensors alive), live_bytes and peak_bytes (CPU tensor "
      .. "memory now and at most), allocations, cached_bytes and cached_small_bytes (freed blocks "
      .. "kept for reuse), device_bytes_made (non-CPU results so far, a total) and held_buffers "
      .. "(foreign memory wrapped as tensors)."),
  ["torch.Tensor.free"] = e("x:free()",
    "Releases the tensor's memory now instead of when Lua collects it; x:is_freed() is then true and "
      .. "using x is an error. Freeing twice does nothing."),
  ["torch.Tensor.is_freed"] = e("x:is_freed() -> boolean",
    "True once x:free(), torch.free(x) or the end of a torch.scope released the tensor."),
  ["torch.Tensor.is_same"] = e("x:is_same(other) -> boolean",
    "True when x and other are handles to the very same tensor (Python's `x is other`; Lua's == "
      .. "on two tensor objects compares the objects).",
    { { "other", "Tensor", "the tensor to compare with." } }),
  ["torch.Tensor.alias"] = e("x:alias() -> Tensor",
    "A second handle to the same tensor: it shares x's storage, sizes, strides and autograd "
      .. "identity (so freeing one handle leaves the other usable)."),
  -- inspection and debugging (lua/torch/_describe.lua, lua/torch/autograd.lua, lua/torch/init.lua)
  ["torch.Tensor.describe"] = e("x:describe() -> string",
    "A summary of the tensor: shape, dtype and device; min, max, mean and (sample) std of its finite "
      .. "values, computed in float64 without autograd; the number of NaN and Inf elements; "
      .. "requires_grad and grad_fn. Complex and empty tensors get shape, dtype, device and grad only. "
      .. "help(x) at the REPL prints it."),
  ["torch.Tensor.grad_fn_name"] = e("x:grad_fn_name() -> string or nil",
    "The name of the autograd node that made x (\"MulBackward0\"), or nil for a leaf; x.grad_fn is "
      .. "the node itself, as PyTorch's: g:name(), g.next_functions (a list of {node, input_nr} pairs, "
      .. "node nil for an input that needs no grad), g.variable (an AccumulateGrad node's leaf tensor), "
      .. "g == h for the same node, and the ltorch-only g:id() (the node's address, a table key while it "
      .. "lives). The REPL's :graph x prints the whole graph above x as a tree."),
  ["torch.breakpoint"] = e("torch.breakpoint()",
    "Stops the program and opens a debugger REPL at the caller: its locals and upvalues are in "
      .. "scope (assignments write back), :bt/:up/:down move between frames, :c continues. Needs "
      .. "the ltorch executable (its REPL); lua/torch/repl/debugger.lua."),
  -- construction (lua/torch/init.lua, lua/torch/_creation.lua, lua/torch/nn/initializers.lua)
  ["torch.Size"] = e("torch.Size({d1, d2, ...}) -> Size",
    "A new Size (what x:size() and x.shape return) from a list of integers; torch.Size() is the "
      .. "empty Size. The list is copied, never adopted; a non-integer element is an error.",
    { { "list", "table of integers", "the sizes, outermost first." } }),
  ["torch.scalar_tensor"] = e("torch.scalar_tensor(value, {dtype = torch.get_default_dtype(), device = \"cpu\", "
      .. "requires_grad = false}) -> Tensor",
    "A 0-dimensional tensor holding value (a number or boolean), of the default float dtype unless "
      .. "dtype says otherwise.",
    { { "value", "number or boolean", "the element." },
      { "dtype", "dtype, optional", "the tensor's dtype (default: the default float dtype)." },
      { "device", "device, optional", "where the tensor lives (default: cpu)." },
      { "requires_grad", "boolean, optional", "whether autograd records operations on it." } }),
  ["torch.nn.init.calculate_fan_in_and_fan_out"] = e("torch.nn.init.calculate_fan_in_and_fan_out(t) -> fan_in, fan_out",
    "The fan-in and fan-out of a weight laid out as (out, in, *kernel): fan_in = in * kernel size, "
      .. "fan_out = out * kernel size, as PyTorch's private _calculate_fan_in_and_fan_out (the "
      .. "initializers use them). A tensor with fewer than 2 dimensions is an error.",
    { { "t", "Tensor", "the weight (2 or more dimensions)." } }),
  -- autograd and autocast queries (lua/torch/autograd.lua, lua/torch/amp/init.lua)
  ["torch.is_anomaly_enabled"] = e("torch.is_anomaly_enabled() -> boolean",
    "Whether autograd's anomaly detection is on (torch.set_detect_anomaly, torch.autograd.detect_anomaly)."),
  ["torch.is_autocast_enabled"] = e("torch.is_autocast_enabled({device_type = \"cuda\"}) -> boolean",
    "Whether autocast (mixed precision) is on for the device type; without an argument it means "
      .. "cuda, as PyTorch 1.13's torch.is_autocast_enabled().",
    { { "device_type", "string, optional", "\"cuda\" (default) or \"cpu\"." } }),
  ["torch.is_autocast_cpu_enabled"] = e("torch.is_autocast_cpu_enabled() -> boolean",
    "torch.is_autocast_enabled(\"cpu\"): whether autocast is on for the CPU."),
  ["torch.get_autocast_cpu_dtype"] = e("torch.get_autocast_cpu_dtype() -> dtype",
    "The dtype autocast casts to on the CPU (torch.get_autocast_dtype(\"cpu\"))."),
  ["torch.get_autocast_gpu_dtype"] = e("torch.get_autocast_gpu_dtype() -> dtype",
    "The dtype autocast casts to on CUDA (torch.get_autocast_dtype(\"cuda\"))."),
  ["torch.is_autocast_cache_enabled"] = e("torch.is_autocast_cache_enabled() -> boolean",
    "Whether autocast caches the low-precision casts of weights (leaf tensors that require grad) "
      .. "inside an autocast region."),
  ["torch.clear_autocast_cache"] = e("torch.clear_autocast_cache()",
    "Empties autocast's cache of low-precision casts (torch.autocast also empties it when the outermost "
      .. "autocast region ends)."),
}
