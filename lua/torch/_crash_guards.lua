--[[
  torch._crash_guards — ops whose libtorch 2.11 kernels crash the process (a segfault, not an
  exception) on inputs that pass their own checks; each is the generated op behind one guard
  that turns exactly that input into a Lua error at the caller's line. PyTorch 2.11 crashes on
  the same calls, so the guard changes nothing that worked. (torch.range's SIGFPE guard lives
  with the other creation functions in torch._creation.)

    lu_unpack(LU_data, LU_pivots, unpack_data=true, unpack_pivots=true): with unpack_pivots, an
      empty LU_pivots beside a non-empty LU_data (any dtype) reads out of bounds (found by
      tools/api_fuzz.lua):
        python3 -c 'import torch; torch.lu_unpack(torch.zeros(3, 4, dtype=torch.uint8),
                    torch.zeros(0, dtype=torch.int32))'      -> Segmentation fault
      More generally, LU_pivots whose shape is not LU_data.shape[:-2] + (min(m, n),) is read
      as if it were: batch dims that differ make garbage permutations, and more pivot rows than
      LU_data's batch write past the permutation's memory (found by tools/api_fuzz.lua --canaries
      in its 1,000,000-call run):
        python3 -c 'import torch; LU, p = torch.linalg.lu_factor(torch.randn(2, 3, 3));
                    torch.lu_unpack(LU[0], p)'                -> glibc's "free(): invalid pointer"
      The guard refuses a pivots shape other than that one (with unpack_pivots).

    normal(mean, std, size, {out=}): a size with a negative dimension resizes `out` to it (the
      numel overflow is raised only afterwards), and the next op on that tensor crashes (found by
      tools/api_fuzz.lua, seed 3):
        python3 -c 'import torch; o = torch.zeros(2, 2); torch.normal(1.5, 1.0, (-2, 1), out=o)
                    ... ; o.zero_()'                               -> Segmentation fault
      Without out= libtorch raises "Trying to create tensor with negative dimension -2"; the guard
      raises that for both forms.

    linalg_svdvals(A, {out=}) (torch.linalg.svdvals too): an out= that shares A's memory is
      resized to the result's shape before the kernel reads A's sizes, which it then reads freed
      (found by tools/api_fuzz.lua, seed 20261202):
        python3 -c 'import torch; a = torch.randn(3, 4); torch.linalg.svdvals(a, out=a)'
                                  -> a garbage SymInt error, or a segfault
      The guard refuses an out= whose storage is A's.

    linalg_eigvalsh(A, UPLO="L", {out=}) (torch.linalg.eigvalsh too): the same order, with A
      batched: out= sharing A's memory is resized to the eigenvalues' shape (..., n), and the
      kernel then copies A, now of that shape, as (..., n, n) matrices, out of bounds on the heap
      (found by tools/api_fuzz.lua, seed 20261202, with its --canaries check):
        python3 -c 'import torch; a = torch.randn(2, 3, 5, 5); torch.linalg.eigvalsh(a, out=a)'
                                  -> Segmentation fault, or glibc's "double free or corruption"
      (an unbatched A becomes 1-D and raises). The guard refuses an out= whose storage is A's.
]]
local ffi = require "ffi"
local args = require "torch._args"
local dispatch = require "torch._dispatch"
local T = require "torch._tensor"

local M = {}

local generated_lu_unpack
function M.lu_unpack(...)
  local a, n = args.pack(...)
  while n > 0 and a[n] == nil do n = n - 1 end
  local kw = {}
  if n > 0 and args.is_options(a[n]) then kw, n = a[n], n - 1 end
  local lu, pivots = a[1], a[2]
  if n < 1 then lu = kw.LU_data end
  if n < 2 then pivots = kw.LU_pivots end
  local unpack_pivots = a[4]
  if n < 4 then unpack_pivots = kw.unpack_pivots end
  if unpack_pivots ~= false and T.is_tensor(lu) and T.is_tensor(pivots) and lu.h ~= nil and pivots.h ~= nil then
    if pivots:numel() == 0 and lu:numel() > 0 then
      error(("torch.lu_unpack: LU_pivots is empty but LU_data is %s %s: pass the pivots that "
        .. "torch.linalg.lu_factor returned with it (libtorch crashes on this input)")
        :format(tostring(lu.dtype), tostring(lu:size())), 2)
    end
    local ls, ps = lu:size(), pivots:size()
    if #ls >= 2 then   -- fewer: libtorch's own error
      local want = {}
      for i = 1, #ls - 2 do want[i] = ls[i] end
      want[#want + 1] = math.min(ls[#ls - 1], ls[#ls])
      local same = #ps == #want
      for i = 1, #want do same = same and ps[i] == want[i] end
      if not same then
        local function tuple(t) return "(" .. table.concat(t, ", ") .. (#t == 1 and ",)" or ")") end
        error(("torch.lu_unpack: LU_pivots must have the shape LU_data.shape[:-2] + (min(m, n),) = %s, got "
          .. "%s: pass the pivots that torch.linalg.lu_factor returned with LU_data (libtorch reads them as "
          .. "that shape, out of bounds)"):format(tuple(want), tuple(ps)), 2)
      end
    end
  end
  generated_lu_unpack = generated_lu_unpack or dispatch.function_for("lu_unpack", "torch.lu_unpack")
  return generated_lu_unpack(...)
end

local generated_normal
function M.normal(...)
  local a, n = args.pack(...)
  for i = 1, n do
    local v = a[i]
    local size = type(v) == "table" and not T.is_tensor(v) and (v.size or (v[1] ~= nil and v)) or nil
    if type(size) == "table" then
      for _, d in ipairs(size) do
        if type(d) == "number" and d < 0 then
          error(("torch.normal: Trying to create tensor with negative dimension %d: %s"):format(d,
            tostring(require("torch").Size(size))), 2)
        end
      end
    end
  end
  generated_normal = generated_normal or dispatch.function_for("normal", "torch.normal")
  return generated_normal(...)
end

-- the start of a tensor's storage: two tensors with the same one share memory
local function storage_base(t)
  local ok, p = pcall(function() return tonumber(ffi.cast("intptr_t", t:data_ptr())) - t:storage_offset() * t:element_size() end)
  return ok and p ~= 0 and p or nil
end

-- op(A, ..., {out=}) refusing an out= that shares A's memory: the kernels of linalg_svdvals and
-- linalg_eigvalsh resize out before they read A. key: A's keyword in the op's schema.
local function out_apart_guard(op, display, key)
  local generated
  return function(...)
    local a, n = args.pack(...)
    while n > 0 and a[n] == nil do n = n - 1 end
    local kw = n > 0 and args.is_options(a[n]) and a[n] or nil
    local A = a[1]
    if kw and n == 1 then A = kw[key] end
    local out = kw and kw.out
    if T.is_tensor(A) and T.is_tensor(out) and A.h ~= nil and out.h ~= nil then
      local base = storage_base(A)
      if base and base == storage_base(out) then
        error(("%s: out= shares memory with the input A: pass a new tensor as out= (libtorch "
          .. "resizes out before it reads A, and crashes)"):format(display), 2)
      end
    end
    generated = generated or dispatch.function_for(op, display)
    return generated(...)
  end
end
M.linalg_svdvals = out_apart_guard("linalg_svdvals", "torch.linalg_svdvals", "A")
M.linalg_eigvalsh = out_apart_guard("linalg_eigvalsh", "torch.linalg_eigvalsh", "self")
M.linalg = {   -- set into torch.linalg by init.lua
  svdvals = out_apart_guard("linalg_svdvals", "torch.linalg.svdvals", "A"),
  eigvalsh = out_apart_guard("linalg_eigvalsh", "torch.linalg.eigvalsh", "self"),
}

return M
