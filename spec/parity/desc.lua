--[[
  spec/parity/desc.lua — the little language the parity cases are written in.

  Why: every case in spec/parity/cases_*.lua is data (op, argument descriptors, options), so the
  runner (spec/parity/runner.lua) can build the same inputs in ltorch and in PyTorch.

  What:
    T(shape, spec)  a generated tensor; `spec` is space-separated words:
        kind   randn (default) | pos (0.1..2.1) | gt1 (1.1..3.1) | unit (-0.9..0.9) | rand (0..1)
               | prob (0.05..0.95) | halves (k/2, rounding ties) | ints (float holding integers -5..5) | special
               (randn with NaN, inf, -inf, 0, -0 in front) | spd (A Aᵀ + nI, square) | sorted
               | int (-5..5) | nat (1..5) | idx<N> (0..N-1) | bool | zero
        dtype  f32 (default for float kinds) | f64 | i64 (default for integer kinds) | i32 | i16
               | i8 | u8
        view   t (a transposed view of a contiguous base) | s (every 2nd element of the last dim)
               | e (expanded from size 1 in dim 0)
        grad   nograd (never requires grad)
    V(values, dtype, spec)  a tensor with these exact values (a flat or nested Lua array);
              spec "nograd" keeps it from requiring grad.
    L{...}    a Tensor[] argument;   D"float64"  a dtype argument;   N  None (a positional nil).
    Plain numbers, booleans, strings and arrays of numbers pass through; a trailing table with
    string keys is the keyword table, as in ltorch itself.
    group(defaults) -> add, list:  add(op, args, opts) appends a case. `op` is "name" (torch.X),
    ":name" (a method of the first argument), "linalg.x" / "special.x" / "fft.x" (namespaces),
    "F.x" (torch.nn.functional) or "nn.x" (torch._nn in ltorch, torch._C._nn in PyTorch).
    opts: tol (nil/false: bitwise; or {rtol=, atol=}), gtol (for grads; default tol),
      grad (false: no input requires grad), py (a Python expression for the callable when
      PyTorch's differs), name, fn (a Lua function of the built arguments, for a composite;
      `py` then holds the same composite as a Python lambda), expect_error (both sides must
      fail), known (a library bug: pending while it fails), note (why a case is as it is).
    Tolerances: F32 (rtol 1e-5, atol 1e-6), F64 (rtol 1e-10, atol 1e-12), LIN (rtol 1e-4, atol 1e-5).

  Use:  local d = require "spec.parity.desc"
        local add, cases = d.group({ tol = d.F32 })
        add("exp", { d.T({3, 4}) });  add(":clamp", { d.T({5}, "t"), -0.5, 0.5 })
        return cases
]]
local M = {}

M.F32 = { rtol = 1e-5, atol = 1e-6 }
M.F64 = { rtol = 1e-10, atol = 1e-12 }
M.LIN = { rtol = 1e-4, atol = 1e-5 }

local Desc = {}
Desc.__index = Desc
M.Desc = Desc

function M.is_desc(v) return getmetatable(v) == Desc end

function M.T(shape, spec)
  return setmetatable({ kind = "T", shape = shape, spec = spec or "" }, Desc)
end

function M.V(values, dtype, spec)
  return setmetatable({ kind = "V", values = values, dtype = dtype or "float32", spec = spec or "" }, Desc)
end

function M.L(items) return setmetatable({ kind = "L", items = items }, Desc) end
function M.D(name) return setmetatable({ kind = "D", name = name }, Desc) end
M.N = setmetatable({ kind = "N" }, Desc)

-- The canonical op key ("linalg_det", "conv2d") used to count distinct ops.
function M.op_key(op)
  local ns, name = op:match("^(%a+)%.([%w_]+)$")
  if ns == "linalg" or ns == "special" or ns == "fft" then return ns .. "_" .. name end
  if ns then return name end
  return (op:gsub("^:", ""))
end

function M.group(defaults)
  local list = {}
  local function add(op, args, opts)
    local c = { op = op, args = args }
    for k, v in pairs(defaults or {}) do c[k] = v end
    for k, v in pairs(opts or {}) do c[k] = v end
    list[#list + 1] = c
  end
  return add, list
end

return M
