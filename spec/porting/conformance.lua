--[[
  spec/porting/conformance.lua — ltorch against the manifest of PyTorch's Python API (issue #24).
  Shared by spec/porting/conformance_spec.lua and tools/gen_compatibility.lua:

      local C = dofile("spec/porting/conformance.lua")
      local results = C.check()   -- one result per manifest entry, in the manifest's order

  A result: { entry = <manifest entry>, key = "torch.nn.Linear" (PyTorch's qualified name),
  status = "exact" | "differs" | "unchecked" | "missing", detail = what differs (differs only),
  where = the ltorch path when not PyTorch's own, exception = the reason compat_exceptions.lua gives
  for this status (its `missing` or `differs` table) or nil, stale = true when compat_exceptions.lua
  lists the entry but it is no longer missing / different }.

    exact      present, and its argument binder (torch._pysig) takes PyTorch's parameters: the same
               names in the same order, the same keyword-only ones, the same defaults
    differs    present, bound by torch._pysig, but some of that differs (detail says what)
    unchecked  present, but not bound by torch._pysig (a Lua function with its own argument
               handling, an ATen op, a Tensor method): only the name is checked
    missing    not found

  Rules of the comparison: *args / **kwargs of PyTorch's are not compared (the binder has none);
  a PyTorch default that Lua cannot spell in a signature (a tuple such as betas=(0.9, 0.999), an
  object such as torch.contiguous_format) matches any default of the binder's (the callable then
  fills the real default itself); numbers compare to 1e-12 relative.
]]
local torch = require "torch"
local P = require "torch._pysig"

local DIR = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"

local M = {}
M.manifest = dofile(DIR .. "api_manifest.lua")
M.exceptions = dofile(DIR .. "compat_exceptions.lua")

-- The namespaces, in report order, with the ltorch table each resolves in.
M.namespaces = {
  "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.nn.utils.rnn",
  "torch.nn.utils.parametrizations", "torch.optim", "torch.optim.lr_scheduler", "torch.utils.data",
  "torch", "Tensor", "torch.cuda", "torch.cuda.amp", "torch.backends",
}

-- t[k] without raising (ltorch's namespaces and tensors raise on an unknown name).
local function get(t, k)
  if t == nil then return nil end
  local ok, v = pcall(function() return t[k] end)
  if ok then return v end
  return nil
end

-- The value at dotted path "a.b.c" under torch, or nil.
local function lookup(path)
  local v = torch
  for part in path:gmatch("[^.]+") do
    v = get(v, part)
    if v == nil then return nil end
  end
  return v
end

-- Where else a name may live in ltorch (found there, the entry counts as present, and says where).
local ALSO = {
  ["torch.nn.utils.rnn"] = { "nn.utils" },
  ["torch.nn.utils.parametrizations"] = { "nn.utils" },
}

local probe   -- a tensor, for Tensor methods

-- The ltorch value of entry e, and where it was found when not at PyTorch's own path.
function M.resolve(e)
  local ns = e.namespace
  if ns == "Tensor" then
    probe = probe or torch.zeros(1)
    return get(probe, e.name)
  end
  local own = ns == "torch" and e.name or (ns:gsub("^torch%.", "") .. "." .. e.name)
  local v = lookup(own)
  if v ~= nil then return v end
  for _, alt in ipairs(ALSO[ns] or {}) do
    v = lookup(alt .. "." .. e.name)
    if v ~= nil then return v, "torch." .. alt .. "." .. e.name end
  end
  return nil
end

local None = M.manifest.None

local function show(v)
  if v == None or v == P.NONE then return "None" end
  if v == true then return "True" end
  if v == false then return "False" end
  if type(v) == "string" then return "'" .. v .. "'" end
  if type(v) == "table" and v.tuple then
    local parts = {}
    for i = 1, #v do parts[i] = show(v[i]) end
    return "(" .. table.concat(parts, ", ") .. (#v == 1 and ",)" or ")")
  end
  return tostring(v)
end
M.show = show

local function same_default(p, have)
  if p.default == nil then
    if p.default_repr ~= nil then return have ~= nil end   -- unspellable: any default
    return have == nil
  end
  local want = p.default
  if want == None then return have == P.NONE end
  if type(want) == "table" then return have ~= nil end      -- a tuple: unspellable, any default
  if type(want) == "number" and type(have) == "number" then
    if want ~= want then return have ~= have end
    return math.abs(want - have) <= 1e-12 * math.max(1, math.abs(want))
  end
  return want == have
end

-- PyTorch's signature as text ("a, b=1, *, c=None"), *args and **kwargs included.
function M.python_text(e)
  if e.params == nil then return nil end
  local parts, star = {}, false
  for _, p in ipairs(e.params) do
    local s
    if p.kind == "var" then s, star = "*" .. p.name, true
    elseif p.kind == "varkw" then s = "**" .. p.name
    else
      if p.kind == "ko" and not star then parts[#parts + 1] = "*"; star = true end
      s = p.name
      if p.default ~= nil then s = s .. "=" .. show(p.default)
      elseif p.default_repr ~= nil then s = s .. "=" .. p.default_repr end
    end
    parts[#parts + 1] = s
  end
  return table.concat(parts, ", ")
end

-- The binder's signature as text.
function M.lua_text(sig)
  local parts = {}
  for i, name in ipairs(sig.names) do
    if i == sig.npos + 1 then parts[#parts + 1] = "*" end
    local d = sig.defaults[name]
    parts[#parts + 1] = d == nil and name or (name .. "=" .. show(d))
  end
  return table.concat(parts, ", ")
end

-- A method's binder names its receiver first ("self"); PyTorch's manifest lists a method's
-- parameters without it. The binder's signature seen without that first parameter.
local function without_self(sig)
  local names, index = {}, {}
  for i = 2, #sig.names do names[i - 1] = sig.names[i]; index[sig.names[i]] = i - 1 end
  return { name = sig.name, names = names, index = index, defaults = sig.defaults, npos = sig.npos - 1,
    nreq = math.max(sig.nreq - 1, 0) }
end

--[[ nil when sig takes e's parameters, else a text saying what differs. ]]
function M.compare(e, sig)
  if e.params == nil then return nil end   -- PyTorch gives no signature (an ATen builtin)
  if e.namespace == "Tensor" and sig.names[1] == "self" then sig = without_self(sig) end
  local want, npos = {}, 0
  for _, p in ipairs(e.params) do
    if p.kind ~= "var" and p.kind ~= "varkw" then
      want[#want + 1] = p
      if p.kind == "pk" or p.kind == "po" then npos = #want end
    end
  end
  local diffs = {}
  local names_ok = #want == #sig.names
  for i, p in ipairs(want) do if sig.names[i] ~= p.name then names_ok = false end end
  if not names_ok then
    local theirs, extra, lacks = {}, {}, {}
    for _, p in ipairs(want) do
      theirs[p.name] = true
      if sig.index[p.name] == nil then lacks[#lacks + 1] = p.name end
    end
    for _, name in ipairs(sig.names) do if not theirs[name] then extra[#extra + 1] = name end end
    local what = {}
    if #lacks > 0 then what[#what + 1] = "lacks " .. table.concat(lacks, ", ") end
    if #extra > 0 then what[#what + 1] = "adds " .. table.concat(extra, ", ") end
    if #what == 0 then what[1] = "order" end
    diffs[#diffs + 1] = "parameters differ (" .. table.concat(what, "; ") .. ")"
  else
    if sig.npos ~= npos then
      diffs[#diffs + 1] = ("keyword-only from parameter %d (PyTorch: %d)"):format(sig.npos + 1, npos + 1)
    end
    for _, p in ipairs(want) do
      local have = sig.defaults[p.name]
      if not same_default(p, have) then
        diffs[#diffs + 1] = ("default of %s: %s (PyTorch: %s)"):format(p.name,
          have == nil and "required" or show(have),
          p.default ~= nil and show(p.default) or p.default_repr or "required")
      end
    end
  end
  if #diffs == 0 then return nil end
  return table.concat(diffs, "; ") .. "\n    ltorch:  " .. M.lua_text(sig) .. "\n    PyTorch: " .. M.python_text(e)
end

function M.check()
  local results = {}
  for _, e in ipairs(M.manifest.entries) do
    local r = { entry = e, key = e.qualified }
    local v, where = M.resolve(e)
    if v == nil then
      r.status = "missing"
    else
      local sig = P.signature_of(v)
      if sig == nil then
        r.status = "unchecked"
      else
        r.detail = M.compare(e, sig)
        r.status = r.detail and "differs" or "exact"
      end
      if where then r.where = where end
    end
    local listed_missing, listed_differs = M.exceptions.missing[e.qualified], M.exceptions.differs[e.qualified]
    if r.status == "missing" then r.exception = listed_missing
    elseif r.status == "differs" then r.exception = listed_differs end
    if (listed_missing and r.status ~= "missing") or (listed_differs and r.status ~= "differs") then r.stale = true end
    results[#results + 1] = r
  end
  return results
end

-- Per namespace: { namespace, total, exact, differs, unchecked, missing, present, results = {...} }.
function M.summary(results)
  local by, out = {}, {}
  for _, ns in ipairs(M.namespaces) do
    by[ns] = { namespace = ns, total = 0, exact = 0, differs = 0, unchecked = 0, missing = 0, results = {} }
    out[#out + 1] = by[ns]
  end
  for _, r in ipairs(results) do
    local s = by[r.entry.namespace]
    s.total = s.total + 1
    s[r.status] = s[r.status] + 1
    s.results[#s.results + 1] = r
  end
  for _, s in ipairs(out) do s.present = s.total - s.missing end
  return out
end

return M
