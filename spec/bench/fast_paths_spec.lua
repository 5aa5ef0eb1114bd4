--[[
  spec/bench/fast_paths_spec.lua — the per-op fast paths (the dispatch workload's add, mul,
  matmul and x[3], the other indexing forms, a unary and an in-place op, F.linear, three small
  modules called in a row under no_grad) are compiled traces and make no Lua garbage but their
  result tensors: bench/fast_paths.lua checks both in a fresh process, with bounds that hold on a
  loaded machine (nothing is timed). Also that the check fails where it should: with the JIT off
  every path is reported.

  Run:  build/ltorch /usr/bin/busted spec/bench/fast_paths_spec.lua   (~10 s)
]]
local BIN = os.getenv("LTORCH_BIN") or (arg and arg[-1]) or "build/ltorch"

local function run(prefix)
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(prefix, 'arg = {}; dofile("bench/fast_paths.lua")\n')
  f:close()
  local p = assert(io.popen(("%s %s 2>&1; echo \"exit=$?\""):format(BIN, script)))
  local out = p:read("*a")
  p:close()
  os.remove(script)
  return out, out:match("exit=(%d+)%s*$") == "0"
end

describe("fast paths (bench/fast_paths.lua)", function()
  it("are compiled and allocate only their result's ref", function()
    local out, ok = run("")
    assert.is_true(ok, out)
    for _, name in ipairs({ "a + b", "a * b", "m:matmul(m)", "x[3]", "x[{1, {2, 5}}]", "x[mask]", "x[3] = 1.5",
                            "x[3] = row", "a:add_(b)" }) do
      local line = ("\n" .. out):match("\n" .. name:gsub("%p", "%%%0") .. " +(root traces %d+[^\n]*)")
      assert.is_truthy(line, name .. " missing in:\n" .. out)
    end
    assert.is_truthy(out:find("all fast paths compiled", 1, true), out)
  end)

  it("reports every path when nothing is compiled", function()
    local out, ok = run("jit.off(); ")
    assert.is_false(ok, out)
    assert.is_truthy(out:find("FAIL a + b            no root trace", 1, true), out)
    assert.is_truthy(out:find("FAIL x[3]             no root trace", 1, true), out)
  end)
end)
