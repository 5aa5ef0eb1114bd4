-- spec/hardening/api_fuzz_regressions_spec.lua — ltorch bugs that tools/api_fuzz.lua found,
-- each pinned by the smallest call that showed it (the libtorch crashes it found are excluded by
-- name in the fuzzer instead, with a PyTorch reproduction in the reason, or guarded in ltorch
-- with a Lua error before the call: those guards are pinned here too).
local torch = require "torch"

describe("api_fuzz regressions", function()
  describe("torch.Size", function()
    -- torch.Size(t) used to setmetatable(t, Size) on its argument: the fuzzer's
    -- torch.Size(torch.float32) (seed 20261202, call 31017) turned the float32 dtype into a Size
    -- for the rest of the process (tostring(x.dtype) == "torch.Size([])"), followed ~100k
    -- calls later by glibc's "free(): invalid next size (fast)".
    it("never adopts its argument", function()
      local ok = pcall(torch.Size, torch.float32)
      assert.is_false(ok)
      assert.are.equal("torch.float32", tostring(torch.float32))
      assert.are.equal(torch.float32, torch.zeros(2).dtype)
      local list = { 2, 3 }
      local s = torch.Size(list)
      assert.is_nil(getmetatable(list))
      list[1] = 9
      assert.are.equal("torch.Size([2, 3])", tostring(s))
    end)

    it("takes a list of integers or a Size, and nothing else", function()
      assert.are.equal(torch.Size({ 2, 3 }), torch.Size(torch.Size({ 2, 3 })))
      assert.are.equal("torch.Size([])", tostring(torch.Size()))
      assert.are.equal("torch.Size([])", tostring(torch.Size({})))
      assert.has_error(function() torch.Size(3) end)
      assert.has_error(function() torch.Size("2, 3") end)
      assert.has_error(function() torch.Size({ 2.5 }) end)
      assert.has_error(function() torch.Size({ torch.zeros(1) }) end)
      assert.has_error(function() torch.Size(setmetatable({}, { __index = function() error("poisoned") end })) end)
      assert.are.same({ 2, 2 }, torch.zeros(torch.Size({ 2, 2 })):size())
    end)
  end)

  describe("a failed resize (out of memory) leaves the tensor as it was", function()
    -- libtorch 1.13 sets the new sizes before allocating; a failed allocation left the tensor
    -- sized past its storage (PyTorch 1.13.1 too). lt_op_call restores the old geometry.
    it("resize_", function()
      local x = torch.ones(3)
      assert.has_error(function() x:resize_(2 ^ 40) end)
      assert.are.same({ 3 }, x:size())
      assert.are.equal(3, x:sum():item())
    end)

    it("resize_as_", function()
      local x = torch.ones(2, 2)
      assert.has_error(function() x:resize_as_(torch.zeros(1):expand({ 2 ^ 40 })) end)
      assert.are.same({ 2, 2 }, x:size())
      assert.are.equal(4, x:sum():item())
    end)

    it("out= tensors (range, fft_fftfreq)", function()
      local y = torch.ones(2, 2):t()
      assert.has_error(function() torch.range(0.5, 2 ^ 53, { out = y }) end)
      assert.are.same({ 2, 2 }, y:size())
      assert.are.same({ 1, 2 }, y:stride())
      assert.are.equal(4, y:sum():item())
      local z = torch.ones(3)
      assert.has_error(function() torch.fft_fftfreq(2 ^ 53, { out = z }) end)
      assert.are.same({ 3 }, z:size())
      assert.are.equal(3, z:sum():item())
    end)

    it("an out= size whose byte count overflows int64 (diag into 2^31 x 2^31)", function()
      local o = torch.ones(2)
      assert.has_error(function() torch.diag(torch.zeros(0), 2 ^ 31, { out = o }) end)
      assert.are.same({ 2 }, o:size())
      assert.are.equal(2, o:sum():item())
    end)

    it("a resize that succeeds still resizes", function()
      local x = torch.ones(3)
      x:resize_(5)
      assert.are.same({ 5 }, x:size())
      local y = torch.zeros(2)
      torch.range(0, 3, { out = y })
      assert.are.same({ 4 }, y:size())
    end)
  end)

  describe("resize_ with a memory_format on a tensor that already has those sizes", function()
    -- libtorch 1.13 skips growing the storage (the sizes did not change) and then restrides to
    -- contiguous: an expanded 64x64 view over 64 floats became strides (64, 1) over 256 bytes,
    -- and the next write corrupted the heap (the fuzzer's "corrupted double-linked list",
    -- seed 20261202; PyTorch 1.13.1 segfaults the same way). lt_op_call grows the storage.
    it("grows the storage to fit the new strides", function()
      local base = torch.randn(1, 64)
      local x = base:expand({ 64, 64 })
      x:resize_(64, 64, { memory_format = "contiguous_format" })
      assert.are.same({ 64, 1 }, x:stride())
      x:fill_(2)
      assert.are.equal(8192, x:sum():item())
      local y = torch.randn(1, 4):expand({ 3, 4 })
      y:resize_as_(torch.zeros(3, 4, { dtype = torch.int64 }), { memory_format = "contiguous_format" })
      assert.are.same({ 4, 1 }, y:stride())
      y:fill_(1)
      assert.are.equal(12, y:sum():item())
      assert.are.same({ 1, 64 }, base:size())  -- the base shares the grown storage, unchanged in shape
    end)
  end)

  describe("torch.range with an integer dtype and a step in (-1, 1)", function()
    -- libtorch 2.11's range_out casts the step to int64 for every integer dtype and divides by
    -- it: SIGFPE (seed 20261202, range(0.5, 0.5, 0.5, {out=T3:int64})); PyTorch 2.11 too.
    -- torch.range raises first; every other call reaches libtorch as before.
    local function guarded(...)
      local ok, err = pcall(torch.range, ...)
      return not ok and tostring(err):find("truncates to 0", 1, true) ~= nil
    end

    it("raises a Lua error at the caller's line instead of dying", function()
      assert.is_true(guarded(0.5, 0.5, 0.5, { out = torch.empty(3, { dtype = torch.int64 }) }))
      for _, dt in ipairs({ torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64 }) do
        assert.is_true(guarded(0, 3, 0.5, { dtype = dt }))
      end
      assert.is_true(guarded(3, 0, -0.99, { dtype = "int64" }))
      assert.is_true(guarded(0, 3, { step = 1e-300, dtype = torch.int32 }))
      assert.is_true(guarded({ start = 0, ["end"] = 1, step = 0.5, dtype = 4 }))  -- 4: int64's code
      -- torch.nn.functional's fallback to the generated ops takes the guarded factory too
      assert.are.equal(torch.range, torch.nn.functional.range)
      assert.has_error(function() torch.nn.functional.arange(0, 3, 0.5, { dtype = torch.int64 }) end)
      local line
      local ok, err = pcall(function()
        line = debug.getinfo(1, "l").currentline + 1
        local r = torch.range(0, 3, 0.5, { dtype = torch.int32 })
        return r
      end)
      assert.is_false(ok)
      assert.truthy(err:find(":" .. line .. ": torch.range: step 0.5 truncates to 0", 1, true), err)
    end)

    it("leaves libtorch's own errors and results alone", function()
      assert.are.same({ 0, 1, 2, 3 }, torch.range(0, 3, 1.5, { dtype = torch.int64 }):tolist())
      assert.are.same({ 0, 0.5, 1 }, torch.range(0, 1, 0.5):tolist())
      assert.are.same({ 0, 0.5, 1 }, torch.range(0, 1, 0.5, { dtype = torch.float16 }):tolist())
      assert.is_false(guarded(3, 0, 0.5, { dtype = torch.int64 }))     -- bounds against the step's sign
      assert.is_false(guarded(0, 1 / 0, 0.5, { dtype = torch.int64 }))  -- not convertible to int64
      assert.is_false(guarded(0, 3, 0 / 0, { dtype = torch.int64 }))
      assert.is_false(guarded(0, 3, 0.5, { dtype = torch.bool }))      -- no bool kernel
      assert.has_error(function() torch.range(3, 0, 0.5, { dtype = torch.int64 }) end)
    end)
  end)

  describe("torch.lu_unpack with empty pivots (a libtorch segfault, guarded)", function()
    -- seed 20261202: lu_unpack(T3x4:uint8, T0:int32, false) killed the fuzzer with SIGSEGV;
    -- PyTorch 2.11 crashes on the same call for every dtype of LU_data
    -- (python3 -c 'import torch; torch.lu_unpack(torch.zeros(3, 4), torch.zeros(0, dtype=torch.int32))').
    it("is a Lua error at the caller's line", function()
      local line = debug.getinfo(1, "l").currentline + 1
      local ok, err = pcall(function() local r = torch.lu_unpack(torch.zeros(3, 4, { dtype = torch.uint8 }), torch.zeros(0, { dtype = torch.int32 }), false); return r end)
      assert.is_false(ok)
      assert.truthy(err:find(":" .. line .. ": torch.lu_unpack: LU_pivots is empty", 1, true), err)
      assert.has_error(function() torch.lu_unpack(torch.zeros(3, 4), torch.zeros(0, { dtype = torch.int32 })) end)
    end)

    it("leaves the calls that work alone", function()
      local A = torch.randn(3, 3, { dtype = torch.float64 })
      local LU, piv = torch.linalg.lu_factor(A)
      local P, L, U = torch.lu_unpack(LU, piv)
      assert.is_true(torch.allclose(P:matmul(L):matmul(U), A))
      assert.are.equal(3, select("#", torch.lu_unpack(torch.zeros(3, 4), torch.zeros(0, { dtype = torch.int32 }), false, false)))
      assert.are.equal(3, select("#", torch.lu_unpack(torch.zeros(0, 3), torch.zeros(0, { dtype = torch.int32 }))))
    end)

    -- the 1,000,000-call run with --canaries: lu_unpack(T2x3:int32, T2x3:int32, false,
    -- {unpack_pivots=true}) wrote past the permutation's memory; PyTorch 2.11 too
    -- (python3 -c 'import torch; LU, p = torch.linalg.lu_factor(torch.randn(2, 3, 3));
    -- torch.lu_unpack(LU[0], p)' -> glibc's "free(): invalid pointer")
    it("refuses pivots of another shape than LU_data.shape[:-2] + (min(m, n),)", function()
      local LU, piv = torch.linalg.lu_factor(torch.randn(2, 3, 3))
      local line = debug.getinfo(1, "l").currentline + 1
      local ok, err = pcall(function() local r = torch.lu_unpack(LU[0], piv); return r end)
      assert.is_false(ok)
      assert.truthy(err:find(":" .. line .. ": torch.lu_unpack: LU_pivots must have the shape LU_data.shape[:-2] "
        .. "+ (min(m, n),) = (3,), got (2, 3)", 1, true), err)
      assert.has_error(function() torch.lu_unpack(LU, piv[0]) end)   -- PyTorch: garbage permutations
      assert.has_error(function() torch.lu_unpack(torch.zeros(2, 3), torch.ones(2, 3, { dtype = torch.int32 })) end)
      -- without unpack_pivots the pivots are not read
      assert.are.equal(3, select("#", torch.lu_unpack(LU, piv[0], true, false)))
      local LU2, p2 = torch.linalg.lu_factor(torch.randn(3, 5, { dtype = torch.float64 }))
      local P, L, U = torch.lu_unpack(LU2, p2)
      assert.are.same({ 3, 3 }, P:size())
      assert.are.same({ 3, 5 }, U:size())
      assert.are.same({ 3, 3 }, L:size())
    end)
  end)

  describe("torch.normal with a negative size", function()
    it("is an error, and out= keeps its shape (libtorch resized it to the negative size: seed 3)", function()
      local o = torch.zeros(2, 2, { dtype = torch.complex64 })
      local ok, err = pcall(function() local r = torch.normal(1.5, 0 / 0, { -2, 1 }, { out = o }); return r end)
      assert.is_false(ok)
      assert.matches("Trying to create tensor with negative dimension -2", err, 1, true)
      assert.are.same({ 2, 2 }, o:size())
      o:zero_()
      assert.has_error(function() torch.normal(0, 1, { size = { 3, -1 } }) end)
      assert.are.same({ 2, 3 }, torch.normal(0, 1, { 2, 3 }):size())
      assert.are.same({ 3 }, torch.normal(torch.zeros(3), 1):size())
    end)
  end)

  describe("torch.linalg.svdvals with out= the input (a libtorch crash, guarded)", function()
    -- seed 20261202: linalg_svdvals(T3x4, {out = T3x4}) killed the fuzzer with SIGSEGV; PyTorch
    -- 2.11 reads the same freed sizes (python3 -c 'import torch; a = torch.randn(3, 4);
    -- torch.linalg.svdvals(a, out=a)' -> a garbage SymInt error or a segfault).
    it("refuses an out= sharing A's memory, at the caller's line, in every spelling", function()
      local a = torch.randn(3, 4)
      local line = debug.getinfo(1, "l").currentline + 1
      local ok, err = pcall(function() local r = torch.linalg.svdvals(a, { out = a }); return r end)
      assert.is_false(ok)
      assert.truthy(err:find(":" .. line .. ": torch.linalg.svdvals: out= shares memory with the input A", 1, true), err)
      assert.has_error(function() torch.linalg_svdvals(a, { out = a }) end)
      assert.has_error(function() torch.linalg_svdvals(a, { out = a:view(-1)[{ { 2, 5 } }] }) end)
      assert.has_error(function() torch.linalg.svdvals({ A = a, out = a[1] }) end)
    end)

    it("still computes into a separate out=, and without one", function()
      local a = torch.tensor({ { 3, 0 }, { 0, 4 } }, { dtype = torch.float64 })
      local o = torch.empty(2, { dtype = torch.float64 })
      assert.are.equal(o, torch.linalg.svdvals(a, { out = o }))
      assert.are.same({ 4, 3 }, o:tolist())
      assert.are.same({ 4, 3 }, torch.linalg_svdvals({ A = a }):tolist())
    end)
  end)

  describe("torch.linalg.eigvalsh with out= the input (a libtorch heap overflow, guarded)", function()
    -- seed 20261202: linalg_eigvalsh(T2x3x5x5, "L", {out = T2x3x5x5}) wrote past the end of a
    -- heap block (found with --canaries), and the fuzzer died with SIGSEGV ~300 calls later;
    -- PyTorch 2.11 corrupts its heap on the same call (python3 -c 'import torch; a =
    -- torch.randn(2, 3, 5, 5); torch.linalg.eigvalsh(a, out=a)' -> a segfault or glibc's abort).
    it("refuses an out= sharing A's memory, at the caller's line, in every spelling", function()
      local a = torch.randn(2, 3, 5, 5)
      local line = debug.getinfo(1, "l").currentline + 1
      local ok, err = pcall(function() local r = torch.linalg.eigvalsh(a, { out = a }); return r end)
      assert.is_false(ok)
      assert.truthy(err:find(":" .. line .. ": torch.linalg.eigvalsh: out= shares memory with the input A", 1, true), err)
      assert.has_error(function() torch.linalg_eigvalsh(a, "L", { out = a }) end)
      assert.has_error(function() torch.linalg_eigvalsh(a, "U", { out = a:view(-1)[{ { 2, 31 } }] }) end)
      assert.has_error(function() torch.linalg.eigvalsh({ self = a, out = a[1] }) end)
      assert.are.same({ 2, 3, 5, 5 }, a:size())
    end)

    it("still computes into a separate out=, and without one", function()
      local a = torch.tensor({ { { 2, 0 }, { 0, 1 } } }, { dtype = torch.float64 })
      local o = torch.empty(1, 2, { dtype = torch.float64 })
      assert.are.equal(o, torch.linalg.eigvalsh(a, { out = o }))
      assert.are.same({ { 1, 2 } }, o:tolist())
      assert.are.same({ { 1, 2 } }, torch.linalg_eigvalsh({ self = a, UPLO = "U" }):tolist())
    end)
  end)
end)
