--[[
  spec/parity/cases_index.lua — parity cases for subscripts: ltorch's x[...] grammar
  (lua/torch/_indexing.lua) against the same subscript in Python, reading and assigning,
  forward and backward; and the ATen ops under them (index, index_put_ through x[...] = v).

  Each case is a composite: `fn` indexes in Lua, `py` is the Python lambda with the same
  subscript (x[{{}, 1}] is x[:, 1]; {start, stop, step} and "a:b:c" strings are slices).
  Assignments work on a clone so the leaf keeps its gradient.
  Tolerance: bitwise (subscripts only move values).
  Format: spec/parity/desc.lua.  Run: build/ltorch /usr/bin/busted spec/parity
]]
local torch = require "torch"
local d = require "spec.parity.desc"
local T, V = d.T, d.V
local add, cases = d.group({})

-- sub(lua subscript text, python subscript, input descriptors, lua function)
local function sub(lua_text, py_text, inputs, fn)
  add("index", inputs, { name = "x" .. lua_text .. "  (Python x[" .. py_text .. "])", fn = fn,
    py = "lambda x, *rest: (lambda i=(rest[0] if rest else None): x[" .. py_text .. "])()" })
end

sub("[1]", "1", { T({ 4, 3 }) }, function(x) return x[1] end)
sub("[-1]", "-1", { T({ 4, 3 }) }, function(x) return x[-1] end)
sub("[{1, 2}]", "1, 2", { T({ 4, 3 }) }, function(x) return x[{ 1, 2 }] end)
sub("[{{}, 1}]", ":, 1", { T({ 4, 3 }) }, function(x) return x[{ {}, 1 }] end)
sub("[{{1, 3}}]", "1:3", { T({ 4, 3 }) }, function(x) return x[{ { 1, 3 } }] end)
sub("[{{nil, nil, 2}, {1}}]", "::2, 1:", { T({ 5, 3 }) }, function(x) return x[{ { nil, nil, 2 }, { 1 } }] end)
sub("[{\":\", \"0:2\"}]", ":, 0:2", { T({ 4, 3 }, "t") }, function(x) return x[{ ":", "0:2" }] end)
sub("[{\"::2\", \"-2:\"}]", "::2, -2:", { T({ 5, 4 }) }, function(x) return x[{ "::2", "-2:" }] end)
sub("[{\"...\", 0}]", "..., 0", { T({ 2, 3, 4 }) }, function(x) return x[{ "...", 0 }] end)
sub("[{newaxis, {}, 1}]", "None, :, 1", { T({ 4, 3 }) }, function(x) return x[{ torch.newaxis, {}, 1 }] end)
sub("[{}]", "()", { T({ 4, 3 }) }, function(x) return x[{}] end)
sub("[{0}] of 1-d", "0", { T({ 4 }) }, function(x) return x[{ 0 }] end)
sub("[mask]", "i", { T({ 4, 3 }), T({ 4, 3 }, "bool") }, function(x, m) return x[m] end)
sub("[row mask]", "i", { T({ 4, 3 }), T({ 4 }, "bool") }, function(x, m) return x[m] end)
sub("[idx]", "i", { T({ 4, 3 }), T({ 5 }, "idx4") }, function(x, i) return x[i] end)
sub("[{{}, idx}]", ":, i", { T({ 4, 3 }), T({ 2, 2 }, "idx3") }, function(x, i) return x[{ {}, i }] end)
sub("[{idx, idx}]", "i, i", { T({ 4, 4 }), T({ 3 }, "idx4") }, function(x, i) return x[{ i, i }] end)
sub("[{1, \"1:\"}] int", "1, 1:", { T({ 4, 3 }, "int") }, function(x) return x[{ 1, "1:" }] end)
sub("[{2, 0}] 0-dim", "2, 0", { T({ 4, 3 }) }, function(x) return x[{ 2, 0 }] end)
sub("[{{5, 9}}] empty", "5:9", { T({ 4, 3 }) }, function(x) return x[{ { 5, 9 } }] end)

-- Assignment (on a clone): numbers, broadcast tensors, masks, index tensors.
local function set(lua_text, py_stmt, inputs, fn)
  add("index_put_", inputs, { name = "y = x:clone(); y" .. lua_text .. "  (Python " .. py_stmt .. ")", fn = fn,
    py = "lambda x, *rest: (lambda y=x.clone(), i=(rest[0] if rest else None): (y.__setitem__(" .. py_stmt .. "), y)[1])()" })
end
set("[{0, {}}] = 5", "(0, slice(None)), 5", { T({ 3, 4 }) },
  function(x) local y = x:clone(); y[{ 0, {} }] = 5; return y end)
set("[{{}, 1}] = v", "(slice(None), 1), i", { T({ 3, 4 }), T({ 3 }) },
  function(x, v) local y = x:clone(); y[{ {}, 1 }] = v; return y end)
set("[{\"1:\", {}}] = row", "(slice(1, None), slice(None)), i", { T({ 3, 4 }), T({ 4 }) },
  function(x, v) local y = x:clone(); y[{ "1:", {} }] = v; return y end)
set("[mask] = -1", "i, -1", { T({ 3, 4 }), T({ 3, 4 }, "bool") },
  function(x, m) local y = x:clone(); y[m] = -1; return y end)
set("[idx] = 0", "i, 0", { T({ 5, 2 }), V({ 0, 3 }, "int64") },
  function(x, i) local y = x:clone(); y[i] = 0; return y end)
set("[{\"...\", 0}] = 2.5 int", "(Ellipsis, 0), 2.5", { T({ 2, 3 }, "int") },
  function(x) local y = x:clone(); y[{ "...", 0 }] = 2.5; return y end)

-- The ATen ops themselves.
add("index", { T({ 4, 3 }), { V({ 0, 2, 2 }, "int64") } }, { py = "torch.ops.aten.index" })
add(":index_put", { T({ 4, 3 }), { V({ 1, 3 }, "int64") }, T({ 3 }) })

return cases
