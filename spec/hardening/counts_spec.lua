--[[
  spec/hardening/counts_spec.lua — sizes and counts from users are checked before anything
  proportional to them is allocated or looped over (lua/torch/_views.lua split/chunk,
  lua/torch/_tensor_str.lua printing, and the libtorch ops behind tensor_split, unbind, repeat,
  expand, arange, randperm, one_hot, eye, linspace).

  Each case raises or returns as PyTorch 2.11 does (the expected column was read off
  `.venv/bin/python` with torch 2.11: e.g. torch.chunk(torch.zeros(0), 2**62) raises "cannot
  create std::vector larger than max_size()", torch.zeros(0).repeat(2**62) is an empty tensor),
  and every case takes well under a second. They run in one child process under `timeout`, so a
  regression to a loop of 2^62 steps fails the spec instead of hanging the suite.

  Run:  build/ltorch /usr/bin/busted spec/hardening/counts_spec.lua
]]
local BIN = os.getenv("LTORCH_BIN") or "build/ltorch"

local CHILD = [==[
local torch = require "torch"
local F = require "torch.nn.functional"
local big = torch.zeros(1):expand(2 ^ 62)   -- a view: 2^62 elements, one float of storage
local cases = {
  { "chunk of an empty dim into 2^62", "error", function() return #torch.chunk(torch.zeros(0), 2 ^ 62) end },
  { "chunk of an empty dim into 5", 5, function() return #torch.chunk(torch.zeros(0), 5) end },
  { "chunk of 10 into 2^62", 10, function() return #torch.chunk(torch.zeros(10), 2 ^ 62) end },
  { "chunk of 2^62 into 2^62", "error", function() return #big:chunk(2 ^ 62) end },
  { "split of 2^62 by 1", "error", function() return #big:split(1) end },
  { "split of an empty dim by 2^62", 1, function() return #torch.zeros(0):split(2 ^ 62) end },
  { "tensor_split of an empty dim into 2^62", "error", function() return #torch.tensor_split(torch.zeros(0), 2 ^ 62) end },
  { "tensor_split of 3 into 5", 5, function() return #torch.tensor_split(torch.zeros(3), 5) end },
  { "unbind of 2^62", "error", function() return #big:unbind() end },
  { "repeat of an empty tensor 2^62 times", "0", function() return torch.zeros(0)["repeat"](torch.zeros(0), 2 ^ 62):numel() end },
  { "repeat of one element 2^40 times", "error", function() return torch.zeros(1)["repeat"](torch.zeros(1), 2 ^ 40) end },
  { "expand to 2^62", "4611686018427387904", function() return ("%.0f"):format(big:size(0)) end },
  { "printing an expand to 2^62", "tensor([0., 0., 0.,  ..., 0., 0., 0.])", function() return tostring(big) end },
  { "expand to 2^62 x 2^62", "error", function() return torch.zeros(1, 1):expand(2 ^ 62, 2 ^ 62) end },
  { "arange(2^62)", "error", function() return torch.arange(2 ^ 62) end },
  { "arange(0, 1e300)", "error", function() return torch.arange(0, 1e300) end },
  { "arange(0, inf)", "error", function() return torch.arange(0, math.huge) end },
  { "randperm(2^62)", "error", function() return torch.randperm(2 ^ 62) end },
  { "randperm(2^40)", "error", function() return torch.randperm(2 ^ 40) end },
  { "one_hot of no labels into 2^62 classes", "0", function() return F.one_hot(torch.zeros(0, { dtype = torch.int64 }), 2 ^ 62):numel() end },
  { "one_hot of one label into 2^40 classes", "error", function() return F.one_hot(torch.zeros(1, { dtype = torch.int64 }), 2 ^ 40) end },
  { "eye(2^40)", "error", function() return torch.eye(2 ^ 40) end },
  { "linspace(0, 1, 2^62)", "error", function() return torch.linspace(0, 1, 2 ^ 62) end },
}
for i, c in ipairs(cases) do
  local t0 = os.clock()
  local ok, r = pcall(c[3])
  local got = ok and tostring(r) or "error"
  io.write(("%d\t%s\t%s\t%s\t%.3f\t%s\n"):format(i, c[1], tostring(c[2]), got, os.clock() - t0,
    ok and "" or (tostring(r):gsub("\n.*", ""))))
  io.flush()
end
io.write("done\n")
return cases
]==]

describe("user-given sizes and counts", function()
  local N_CASES = 23
  local results = {}
  setup(function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write(CHILD)
    f:close()
    local p = assert(io.popen("timeout -s KILL 60 " .. BIN .. " " .. path .. " 2>&1"))
    results.out = p:read("*a")
    p:close()
    os.remove(path)
    for line in results.out:gmatch("[^\n]+") do
      local i, name, want, got, secs, msg = line:match("^(%d+)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([%d.]+)\t(.*)$")
      if i then results[tonumber(i)] = { name = name, want = want, got = got, secs = tonumber(secs), msg = msg } end
    end
  end)

  it("all run to the end without hanging", function()
    assert.truthy(results.out:find("\ndone\n", 1, true), results.out)
  end)

  for i = 1, N_CASES do
    it(("case %d is as in PyTorch and fast"):format(i), function()
      local r = results[i]
      assert.is_not_nil(r, results.out)
      assert.are.equal(r.want, r.got, r.name .. ": " .. r.msg)
      assert.is_true(r.secs < 1, ("took %.2f s"):format(r.secs))
      if r.got == "error" then assert.is_true(#r.msg > 0 and not r.msg:find("attempt to", 1, true), r.msg) end
    end)
  end
end)
