--[[
  torch.serialization — torch.save / torch.load for tensors and plain Lua tables of tensors,
  numbers, strings, booleans (nested), in PyTorch's formats, chosen by the file's extension:

    .safetensors  a flat table of tensors (a state dict); other plain values go to the header's
                  __metadata__ (key "ltorch", JSON), so config and counters travel along
    anything else PyTorch's zip `.pt` format, readable by torch.load(path, weights_only=True)

  Python's None loads as nil where Lua can hold one (a dict value: the key is absent; the whole
  file) and as the sentinel M.None, printed "torch.None", inside lists and tuples (see pickle.lua).

  Loading never runs code (see pickle.lua, safetensors.lua, zipdir.lua). Saving is atomic: the
  file is written beside its destination under a temporary name, fsynced, renamed over it and
  the folder fsynced, so a crash at any point leaves the previous file intact.

  Usage:  torch.save(model:state_dict(), "model.pt")
          local sd = torch.load("model.pt", {map_location = "cpu"})
          torch.save({w = w, epoch = 3}, "w.safetensors")
]]
local ffi = require "ffi"
local torch = require "torch"
local _C = require "torch._C"
local memory = require "torch._memory"
local pickle = require "torch.serialization.pickle"
local safetensors = require "torch.serialization.safetensors"
local zipdir = require "torch.serialization.zipdir"
local json = require "torch.serialization.json"

local C, check = _C.C, _C.check

local M = {}
M.None = pickle.None

local tensor_out = _C.TensorOut()
local reader_out = ffi.new("lt_zip_reader*[1]")
local writer_out = ffi.new("lt_zip_writer*[1]")

local function is_safetensors(path) return path:lower():match("%.safetensors$") ~= nil end

local function contiguous_strides(size)
  local stride, acc = {}, 1
  for i = #size, 1, -1 do stride[i] = acc; acc = acc * size[i] end
  return stride
end

local function cpu_bytes(t)
  t = t:detach()
  if t.device.type ~= "cpu" then t = t:to("cpu") end
  t = t:contiguous()
  return t, t:numel() * t.dtype.itemsize
end

-- Writes through fn(tmp) into a temporary file beside path, then swaps it in.
local function atomic(path, what, fn)
  local buf = ffi.new("char[?]", #path + 300)   -- "<path>.tmp.<host>.<pid>.XXXXXX"
  check(C.lt_file_temp(path, buf, #path + 300), what, 3)
  local tmp = ffi.string(buf)
  local ok, err = pcall(fn, tmp)
  if ok then ok, err = pcall(function() check(C.lt_file_commit(tmp, path), what) end) end
  if not ok then
    os.remove(tmp)
    error(err, 0)
  end
end

---------------------------------------------------------------- .pt
local function save_pt(value, path)
  local tensors, keys = {}, {}
  local hooks = {
    is_tensor = torch.is_tensor,
    tensor = function(t)
      local key = keys[t]
      if not key then
        key = tostring(#tensors)
        keys[t] = key
        tensors[#tensors + 1] = { key = key, t = t }
      end
      local size = t:size()
      local list = {}
      for i = 1, #size do list[i] = size[i] end
      return { key = key, dtype = t.dtype.name, numel = t:numel(), size = list, stride = contiguous_strides(list), offset = 0 }
    end,
  }
  local ok, data = pcall(pickle.dump, value, hooks)
  if not ok then error(data, 0) end
  atomic(path, "save", function(tmp)
    check(C.lt_zip_writer_open(writer_out, tmp), "save")
    local w = ffi.gc(writer_out[0], C.lt_zip_writer_free)
    local written, err = pcall(function()
      check(C.lt_zip_writer_add(w, "data.pkl", data, #data), "save")
      for _, e in ipairs(tensors) do
        local t, nbytes = cpu_bytes(e.t)
        check(C.lt_zip_writer_add(w, "data/" .. e.key, t:data_ptr(), nbytes), "save")
      end
      check(C.lt_zip_writer_finish(w), "save")
    end)
    -- Closed now, not at some later collection: after a failed write (disk full) the open
    -- descriptor would keep the removed temporary file's blocks allocated until then.
    ffi.gc(w, nil)
    C.lt_zip_writer_free(w)
    if not written then error(err, 0) end
  end)
end

local function read_record(r, name)
  check(C.lt_zip_reader_read(tensor_out, r, name), "load", 4)
  return memory.wrap(tensor_out[0])
end

local function file_size(path)
  local f, err = io.open(path, "rb")
  if not f then error("load: " .. tostring(err), 0) end
  local size = f:seek("end")
  return f, size
end

local function read_pt(r, prefixed, map_location)
  local raw = read_record(r, "data.pkl")
  local data = ffi.string(raw:data_ptr(), raw:numel())
  local hooks = {
    storage = function(desc)
      local name = "data/" .. desc.key
      if not prefixed[name] then error("pickle: storage record '" .. name .. "' is missing", 0) end
      local dt = torch[desc.dtype]
      local rec = read_record(r, name)
      if rec:numel() ~= desc.numel * dt.itemsize then
        error(("pickle: storage '%s' holds %d bytes, %d %s elements need %d"):format(
          desc.key, rec:numel(), desc.numel, desc.dtype, desc.numel * dt.itemsize), 0)
      end
      local s = torch.empty(desc.numel, { dtype = dt })
      if desc.numel > 0 then ffi.copy(s:data_ptr(), rec:data_ptr(), rec:numel()) end
      return s
    end,
    tensor = function(s, offset, sizes, stride, requires_grad, dtype)
      if dtype then s = s:view(torch[dtype]) end   -- _rebuild_tensor_v3: bytes read as dtype
      local t = s:as_strided(sizes, stride, offset)
      if map_location then t = t:to(map_location) end
      if requires_grad and t.dtype.is_floating_point then t.requires_grad = true end
      return t
    end,
  }
  return pickle.load(data, hooks)
end

-- The archive's version record, read as libtorch's reader will (std::stoull): a number past
-- 2^64 - 1 is refused here with the number itself (libtorch would say only "stoull").
local function check_version(read, size, names, prefixed)
  local name = prefixed[".data/version"] or prefixed["version"]
  if not name or names[name].size > 64 then return end
  local text = zipdir.read_record(read, size, names, name)
  local digits = text:match("^%s*[+-]?0*(%d+)")
  if digits and (#digits > 20 or (#digits == 20 and digits > "18446744073709551615")) then
    error(("the archive's version record holds %s, past 2^64 - 1: not a format version"):format(
      text:match("^%s*(.-)%s*$")), 0)
  end
end

local function load_pt(path, f, size, map_location)
  local function read(offset, n) f:seek("set", offset); return f:read(n) or "" end
  local names = zipdir.list(read, size)
  local prefixed = {}
  for _, n in ipairs(names) do prefixed[n:match("^[^/]*/(.*)$") or n] = n end
  if not prefixed["data.pkl"] then error("load: archive has no data.pkl (a TorchScript archive? use torch.jit.load)", 0) end
  check_version(read, size, names, prefixed)
  check(C.lt_zip_reader_open(reader_out, path), "load", 3)
  local r = ffi.gc(reader_out[0], C.lt_zip_reader_free)
  -- Every record is copied out while the pickle is read, so the reader (and its descriptor)
  -- is closed before load returns, error or not: a loop of loads holds no file, and a
  -- checkpoint deleted after loading frees its disk space at once.
  local ok, result = pcall(read_pt, r, prefixed, map_location)
  ffi.gc(r, nil)
  C.lt_zip_reader_free(r)
  if not ok then error(result, 0) end
  return result
end

---------------------------------------------------------------- .safetensors
local function save_safetensors(value, path)
  if type(value) ~= "table" then error("save: a .safetensors file holds a table of tensors, got " .. type(value), 0) end
  local names, plain = {}, {}
  for k, v in pairs(value) do
    if torch.is_tensor(v) then
      if type(k) ~= "string" then error("save: tensor names in .safetensors must be strings", 0) end
      names[#names + 1] = k
    else
      local function no_tensors(x, where)
        if torch.is_tensor(x) then error("save: " .. where .. " nests a tensor; .safetensors holds a flat table of tensors (use .pt)", 0) end
        if type(x) == "table" and x ~= pickle.None then for kk, vv in pairs(x) do no_tensors(vv, where .. "." .. tostring(kk)) end end
      end
      no_tensors(v, tostring(k))
      plain[k] = v
    end
  end
  table.sort(names)
  local entries, parts = {}, {}
  for i, name in ipairs(names) do
    local t, nbytes = cpu_bytes(value[name])
    local shape = {}
    for j, s in ipairs(t:size()) do shape[j] = s end
    entries[i] = { name = name, dtype = t.dtype.name, shape = shape, nbytes = nbytes }
    parts[i] = t
  end
  local metadata
  if next(plain) then
    local function to_json(x)
      if x == pickle.None then return json.null end
      if type(x) ~= "table" then return x end
      local o = {}
      for k, v in pairs(x) do o[k] = to_json(v) end
      return o
    end
    local ok, text = pcall(json.encode, to_json(plain))
    if not ok then error("save: " .. text, 0) end
    metadata = { ltorch = text }
  end
  local header = safetensors.build_header(entries, metadata)
  atomic(path, "save", function(tmp)
    local f = assert(io.open(tmp, "wb"))
    -- Every write is checked: a short write (disk full) fails here, while a later close can
    -- still succeed and would leave a truncated file to be renamed over the good one.
    local function write(s)
      local ok, err = f:write(s)
      if not ok then f:close(); error(("write failed: %s"):format(tostring(err)), 0) end
    end
    write(header)
    for i, t in ipairs(parts) do
      if entries[i].nbytes > 0 then write(ffi.string(t:data_ptr(), entries[i].nbytes)) end
    end
    assert(f:close())
    check(C.lt_file_sync(tmp), "save")
  end)
end

local function load_safetensors(path, f, size, map_location)
  f:seek("set", 0)
  -- the length is checked (limit, file size) before the rest of the file is read
  safetensors.header_length(f:read(8) or "", size)
  f:seek("set", 0)
  local bytes = f:read("*a") or ""
  local entries, metadata, data_start = safetensors.parse_header(bytes)
  local out = {}
  for _, e in ipairs(entries) do
    local t = torch.empty(e.shape, { dtype = torch[e.dtype] })
    local n = e["end"] - e.begin
    if n > 0 then ffi.copy(t:data_ptr(), ffi.cast("const uint8_t*", bytes) + (data_start - 1 + e.begin), n) end
    if map_location then t = t:to(map_location) end
    out[e.name] = t
  end
  for k, v in pairs(metadata) do
    if k == "ltorch" then
      local ok, plain = pcall(json.decode, v)
      if not ok or type(plain) ~= "table" then error("load: bad ltorch metadata in " .. path, 0) end
      -- null as pickle's None: nil in an object, the None sentinel in an array (JSON arrays
      -- have no holes, so x[1] ~= nil tells them from objects)
      local function from_json(x)
        if x == json.null then return pickle.None end
        if type(x) ~= "table" then return x end
        local is_array = x[1] ~= nil
        for kk, vv in pairs(x) do
          local value = from_json(vv)
          if value == pickle.None and not is_array then value = nil end
          x[kk] = value
        end
        return x
      end
      for pk, pv in pairs(plain) do
        if out[pk] ~= nil then error("load: metadata key '" .. pk .. "' collides with a tensor", 0) end
        local value = from_json(pv)
        if value ~= pickle.None then out[pk] = value end
      end
    elseif out[k] == nil then
      out[k] = v
    end
  end
  return out
end

---------------------------------------------------------------- entry points
--[[ torch.load's keywords (PyTorch 2.11: map_location, pickle_module, weights_only, mmap, and
     pickle's encoding / fix_imports / errors). The loader only ever rebuilds tensors and plain
     data (weights_only = true's meaning, whatever is passed); mmap and pickle's arguments do not
     change the values loaded. Any other keyword is PyTorch's TypeError. ]]
local LOAD_KEYWORDS = { map_location = true, pickle_module = true, weights_only = true, mmap = true,
  encoding = true, fix_imports = true, errors = true }

--[[ torch.serialization.add_safe_globals / safe_globals allow-list Python classes for
     weights_only loads; a Lua script has no Python class to name, so both are errors that say
     what to do. get_safe_globals() lists none (nothing can be added). ]]
local SAFE_GLOBALS_MSG = "%s: allow-listing Python classes has no Lua form (ltorch's loader rebuilds tensors and plain "
  .. "containers only); save plain data in Python instead, e.g. torch.save(model.state_dict(), path)"
function M.add_safe_globals() error(SAFE_GLOBALS_MSG:format("add_safe_globals"), 2) end
function M.safe_globals() error(SAFE_GLOBALS_MSG:format("safe_globals"), 2) end
function M.get_safe_globals() return {} end
function M.clear_safe_globals() end

function M.save(value, path)
  if type(path) ~= "string" then error("bad argument #2 to 'save' (string expected, got " .. type(path) .. ")", 2) end
  if type(value) == "table" and getmetatable(value) ~= nil and type(value.state_dict) == "function" then
    -- PyTorch pickles a whole nn.Module / Optimizer with its Python class: not a thing Lua can write
    local name = rawget(value, "_class") and value._class.__name or tostring(getmetatable(value).__name or "object")
    error(("save: cannot save a whole %s (PyTorch would pickle its Python class); save its state instead: "
      .. "torch.save(x:state_dict(), path), then x:load_state_dict(torch.load(path))"):format(name), 2)
  end
  local ok, err = pcall(is_safetensors(path) and save_safetensors or save_pt, value, path)
  if not ok then error((tostring(err):match("^save:") and "" or "save: ") .. tostring(err), 2) end
end

function M.load(path, opts)
  if type(path) ~= "string" then error("bad argument #1 to 'load' (string expected, got " .. type(path) .. ")", 2) end
  if opts ~= nil and type(opts) ~= "table" then error("bad argument #2 to 'load' (table expected, got " .. type(opts) .. ")", 2) end
  for k, v in pairs(opts or {}) do
    if not LOAD_KEYWORDS[k] then error(("load() got an unexpected keyword argument '%s'"):format(tostring(k)), 2) end
    if k == "pickle_module" and v ~= nil then
      error("load: pickle_module is Python's; ltorch's loader is its own (leave pickle_module out)", 2)
    end
  end
  local map_location = opts and opts.map_location
  if map_location ~= nil then map_location = torch.device(map_location) end
  local ok, f, size = pcall(file_size, path)
  if not ok then error(f, 2) end
  local result
  ok, result = pcall(function()
    if is_safetensors(path) then return load_safetensors(path, f, size, map_location) end
    f:seek("set", 0)
    local magic = f:read(4) or ""
    if magic ~= "PK\3\4" then error("not a PyTorch zip checkpoint (legacy non-zip torch.save files are not supported)", 0) end
    return load_pt(path, f, size, map_location)
  end)
  f:close()
  if not ok then error(("load: %s: %s"):format(path, tostring(result):gsub("^load: ", "")), 2) end
  if result == pickle.None then return nil end   -- torch.save(None, path)
  return result
end

-- Replaces path with text atomically (temp file, fsync, rename, fsync of the folder).
function M.write_file_atomic(path, text)
  atomic(path, "write_file_atomic", function(tmp)
    local f = assert(io.open(tmp, "wb"))
    f:write(text)
    assert(f:close())
    check(C.lt_file_sync(tmp), "write_file_atomic")
  end)
end

function M.get_rng_state()
  check(C.lt_rng_get_state(tensor_out), "get_rng_state")
  return memory.wrap(tensor_out[0])
end

function M.set_rng_state(state)
  if not torch.is_tensor(state) then error("bad argument #1 to 'set_rng_state' (Tensor expected, got " .. type(state) .. ")", 2) end
  check(C.lt_rng_set_state(state.h), "set_rng_state")
end

return M
