--[[
  guarded_state_spec.lua — no error leaves a thread state changed (runtime/guard.c, torch._guard).

  Why: grad mode, inference mode, autocast, anomaly mode and the generator state are set around a
  Lua call and must come back whatever raised there: the call's own error, a host's count hook
  (lua_sethook(L, hook, LUA_MASKCOUNT, n) that raises) or a memory error from the host's
  allocator, at any instruction.

  What:
    * the guard's contract in this process: results (nils included) and error objects pass
      through unchanged, the state is back after an error, nesting, callables, a failed set
      raises at the caller's line;
    * the count-hook sweep: `ltorch guarded_state_sweep.lua hook` raises at every instruction
      count of no_grad, enable_grad, inference_mode, autocast, detect_anomaly, Function.apply,
      backward through a Lua Function, checkpoint, an optimizer step, a DataLoader iteration with
      workers, torch.save, skip_init and fork_rng (the large ones at a stride), and checks every state
      and the next operations after each;
    * the allocation-failure sweep: guarded_state_host.c, an embedding host whose allocator fails
      the n-th allocation, runs the same sweep with n swept;
    * on a stock luajit (no ltorch runtime) the Lua fallback keeps the same contract.
  The two sweeps take about a minute together.

  How: bash scripts/test.sh spec/runtime/guarded_state_spec.lua
]]
local torch = require "torch"
local guard = require "torch._guard"

local BUILD = os.getenv("LTORCH_BUILD_DIR") or "build"
if BUILD:sub(1, 1) ~= "/" then BUILD = os.getenv("PWD") .. "/" .. BUILD end
local BIN = os.getenv("LTORCH_BIN") or (BUILD .. "/ltorch")
local CLEAN = "env -u LTORCH_PATH -u LUA_PATH -u LUA_CPATH -u LUA_INIT "
local SWEEP = "spec/runtime/guarded_state_sweep.lua"

local function q(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

local function sh(cmd)
  local p = assert(io.popen("(" .. cmd .. ") 2>&1; echo \"__rc=$?\""))
  local out = p:read("*a")
  p:close()
  local rc = tonumber(out:match("__rc=(%d+)\n?$"))
  return (out:gsub("__rc=%d+\n?$", "")), rc
end

local function have(tool) return select(2, sh("command -v " .. tool .. " >/dev/null")) == 0 end

-- Every case line of a sweep's output says recovered == rounds, and all cases ran.
local function assert_swept(out, rc)
  local cases = 0
  for name, ok, rounds in out:gmatch("\n?([%w_%.]+) (%d+)/(%d+) points=%d+") do
    cases = cases + 1
    assert.are.equal(rounds, ok, name .. " leaked state:\n" .. out)
  end
  assert.are.equal(13, cases, out)
  assert.matches("sweep: ok\n", out)
  assert.are.equal(0, rc, out)
end

describe("guarded state changes (torch._guard)", function()
  it("uses the C guard under the ltorch runtime", function()
    assert.is_true(guard.native)
    assert.are.equal("table", type(_LTORCH.guard))
  end)

  it("passes results through, nils and counts included", function()
    local n = select("#", torch.no_grad(function() return 1, nil, 3, nil end))
    assert.are.equal(4, n)
    local a, b, c = torch.inference_mode(function() return "x", nil, torch.is_inference_mode_enabled() end)
    assert.are.same({ "x", nil, true }, { a, b, c })
    assert.is_false(torch.is_inference_mode_enabled())
  end)

  it("re-raises the function's own error object after the restore", function()
    local obj = { tag = "mine" }
    local ok, err = pcall(torch.no_grad, function() error(obj) end)
    assert.is_false(ok)
    assert.are.equal(obj, err)
    assert.is_true(torch.is_grad_enabled())
    ok, err = pcall(torch.autocast, "cpu", function() error("boom", 0) end)
    assert.are.same({ false, "boom" }, { ok, err })
    assert.is_false(torch.is_autocast_enabled("cpu"))
    ok = pcall(torch.autograd.detect_anomaly, function() error("boom") end)
    assert.is_false(ok)
    assert.is_false(torch.is_anomaly_enabled())
    ok = pcall(torch.inference_mode, function() error("boom") end)
    assert.is_false(ok)
    assert.is_false(torch.is_inference_mode_enabled())
  end)

  it("nests, and restores each level", function()
    local inner, middle
    torch.no_grad(function()
      inner = torch.enable_grad(function() return torch.is_grad_enabled() end)
      middle = torch.is_grad_enabled()
    end)
    assert.is_true(inner)
    assert.is_false(middle)
    assert.is_true(torch.is_grad_enabled())
  end)

  it("a set that fails runs nothing and raises at the caller's line", function()
    local ran = false
    local ok, err = pcall(torch.autocast, "cpu", function() ran = true end, { dtype = torch.int32 })
    assert.is_false(ok)
    assert.is_false(ran)
    assert.matches("autocast", err)
    assert.is_false(torch.is_autocast_enabled("cpu"))
  end)

  it("forks the generator: set before, the caller's state back after, even on an error", function()
    torch.manual_seed(1)
    local fork = torch.get_rng_state()
    torch.manual_seed(2)
    local before = torch.get_rng_state()
    local expected = (function() torch.set_rng_state(fork); return torch.rand(3) end)()
    torch.set_rng_state(before)
    local got = guard.rng(torch.get_rng_state(), fork, function() return torch.rand(3) end)
    assert.is_true(torch.equal(expected, got))
    assert.is_true(torch.equal(before, torch.get_rng_state()))
    local ok = pcall(guard.rng, torch.get_rng_state(), fork, function() torch.rand(5); error("x") end)
    assert.is_false(ok)
    assert.is_true(torch.equal(before, torch.get_rng_state()))
  end)

  it("calls callables (a table with __call) and reports a value that is not one", function()
    local callable = setmetatable({}, { __call = function(_, v) return v * 2 end })
    assert.are.equal(8, guard.grad(false, callable, 4))
    local ok, err = pcall(guard.grad, false, 42)
    assert.is_false(ok)
    assert.matches("attempt to call", err)
    assert.is_true(torch.is_grad_enabled())
  end)

  it("a count hook that raises at any instruction leaks no state (child ltorch, the sweep)", function()
    assert_swept(sh("timeout -s KILL 240 " .. CLEAN .. q(BIN) .. " " .. SWEEP .. " hook"))
  end)

  it("an allocator that fails the n-th allocation leaks no state (an embedding host)", function()
    if not have("cc") or not have("pkg-config") then return pending("no C compiler or pkg-config") end
    local exe = os.tmpname()
    local out, rc = sh("cc -std=c11 -O1 -Wall -Wextra -Werror spec/runtime/guarded_state_host.c -I runtime -I bindings "
      .. "$(pkg-config --cflags --libs luajit) -L " .. q(BUILD) .. " -lltorch -Wl,-rpath," .. q(BUILD)
      .. " -o " .. q(exe))
    assert.are.equal(0, rc, out)
    local ok, run_out, run_rc = pcall(sh, "timeout -s KILL 240 " .. CLEAN .. q(exe) .. " " .. SWEEP)
    os.remove(exe)
    assert(ok, run_out)
    assert_swept(run_out, run_rc)
  end)

  it("on a stock luajit the Lua fallback keeps the contract", function()
    if not have("luajit") then return pending("no luajit on PATH (Debian package luajit2)") end
    local lua = os.getenv("PWD") .. "/lua"
    local script = [[
      local torch = require "torch"
      local guard = require "torch._guard"
      assert(guard.native == false, "expected the fallback")
      assert(select("#", torch.no_grad(function() return 1, nil end)) == 2)
      assert(not pcall(torch.no_grad, function() error("x") end) and torch.is_grad_enabled())
      assert(not pcall(torch.inference_mode, function() error("x") end) and not torch.is_inference_mode_enabled())
      assert(not pcall(torch.autocast, "cpu", function() error("x") end) and not torch.is_autocast_enabled("cpu"))
      assert(not pcall(torch.autograd.detect_anomaly, function() error("x") end) and not torch.is_anomaly_enabled())
      local st = torch.get_rng_state()
      assert(not pcall(torch.random.fork_rng, function() torch.rand(3); error("x") end))
      assert(torch.equal(st, torch.get_rng_state()), "fork_rng restores")
      local F = torch.autograd.Function()
      function F.forward(_, x) return x * 2 end
      function F.backward() error("in backward") end
      local x = torch.ones(2, { requires_grad = true })
      assert(not pcall(function() F.apply(x):sum():backward() end))
      local y = torch.ones(2, { requires_grad = true })
      ;(y * 3):sum():backward()
      assert(y.grad:eq(3):all():item(), "autograd works after a failed backward")
      print("fallback ok")
    ]]
    local out, rc = sh("cd / && " .. CLEAN .. "LTORCH_BINDINGS=" .. q(BUILD .. "/libltorch_bindings.so")
      .. " LUA_PATH=" .. q(lua .. "/?.lua;" .. lua .. "/?/init.lua;;") .. " luajit -e " .. q(script))
    assert.are.equal(0, rc, out)
    assert.are.equal("fallback ok\n", out)
  end)
end)
