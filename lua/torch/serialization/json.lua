--[[
  torch.serialization.json — a small strict JSON codec for safetensors headers and checkpoint
  metadata. Pure Lua (no FFI, no torch), so the fuzz harness runs it as is.

  decode(text, max_depth) refuses what a lenient parser would let through: duplicate object
  keys, trailing garbage, control characters in strings, unpaired surrogate escapes (\ud800
  alone: no UTF-8 form), nesting deeper than max_depth
  (default 64). Arrays become 1-based Lua arrays; null becomes json.null.
  decode(text, max_depth, {exact_integers = true}): only plain unsigned integer literals below
  2^53 come back as numbers; any other number (negative, fraction, exponent, -0, 2^53 or more)
  comes back as a json.Number table whose tostring is the literal as written, so a reader that
  wants unsigned integers (safetensors' usize) can refuse it naming the real text.
  encode(value) writes tables with keys 1..n as arrays, other tables as objects with sorted
  string keys; NaN and infinities are refused (JSON has none).

  Usage:  local json = require "torch.serialization.json"
          json.decode('{"a": [1, 2]}').a[2] --> 2;  json.encode({x = 1}) --> '{"x":1}'
]]
local M = {}

M.null = setmetatable({}, { __tostring = function() return "json.null" end })
M.Number = { __tostring = function(b) return b.text end }
local exact_integers = false   -- decode's option, set at the start of each call

local byte, sub, find, char = string.byte, string.sub, string.find, string.char
local floor = math.floor

local function fail(_, pos, msg)
  error(("invalid JSON at byte %d: %s"):format(pos, msg), 0)
end

local function skip(s, pos)
  local _, e = find(s, "^[ \t\r\n]*", pos)
  return e + 1
end

local escapes = { [34] = '"', [92] = "\\", [47] = "/", [98] = "\b", [102] = "\f", [110] = "\n", [114] = "\r", [116] = "\t" }

local function utf8(cp)
  if cp < 0x80 then return char(cp) end
  if cp < 0x800 then return char(0xC0 + floor(cp / 64), 0x80 + cp % 64) end
  if cp < 0x10000 then return char(0xE0 + floor(cp / 4096), 0x80 + floor(cp / 64) % 64, 0x80 + cp % 64) end
  return char(0xF0 + floor(cp / 262144), 0x80 + floor(cp / 4096) % 64, 0x80 + floor(cp / 64) % 64, 0x80 + cp % 64)
end

local function read_string(s, pos)
  local parts, i = {}, pos + 1
  while true do
    local j = find(s, '["\\%c]', i)
    if not j then fail(s, pos, "unterminated string") end
    parts[#parts + 1] = sub(s, i, j - 1)
    local c = byte(s, j)
    if c == 34 then return table.concat(parts), j + 1 end
    if c ~= 92 then fail(s, j, "control character in string") end
    local e = byte(s, j + 1)
    if e == 117 then
      local hex = sub(s, j + 2, j + 5)
      if not find(hex, "^%x%x%x%x$") then fail(s, j, "bad \\u escape") end
      local cp = tonumber(hex, 16)
      if cp >= 0xD800 and cp <= 0xDBFF and sub(s, j + 6, j + 7) == "\\u" then
        local lo = tonumber(sub(s, j + 8, j + 11), 16)
        if lo and lo >= 0xDC00 and lo <= 0xDFFF then
          cp = 0x10000 + (cp - 0xD800) * 1024 + (lo - 0xDC00)
          j = j + 6
        end
      end
      -- an unpaired surrogate has no UTF-8 form (strict readers, serde_json among them, refuse it)
      if cp >= 0xD800 and cp <= 0xDFFF then fail(s, j, ("lone surrogate \\u%04x"):format(cp)) end
      parts[#parts + 1] = utf8(cp)
      i = j + 6
    elseif escapes[e] then
      parts[#parts + 1] = escapes[e]
      i = j + 2
    else
      fail(s, j, "bad escape")
    end
  end
end

local read_value

local function read_array(s, pos, depth, max_depth)
  local out, n = {}, 0
  pos = skip(s, pos + 1)
  if byte(s, pos) == 93 then return out, pos + 1 end
  while true do
    local v
    v, pos = read_value(s, pos, depth + 1, max_depth)
    n = n + 1
    out[n] = v
    pos = skip(s, pos)
    local c = byte(s, pos)
    if c == 93 then return out, pos + 1 end
    if c ~= 44 then fail(s, pos, "expected ',' or ']'") end
    pos = skip(s, pos + 1)
  end
end

local function read_object(s, pos, depth, max_depth)
  local out = {}
  pos = skip(s, pos + 1)
  if byte(s, pos) == 125 then return out, pos + 1 end
  while true do
    if byte(s, pos) ~= 34 then fail(s, pos, "expected a string key") end
    local k
    k, pos = read_string(s, pos)
    if out[k] ~= nil then fail(s, pos, ("duplicate key %q"):format(k)) end
    pos = skip(s, pos)
    if byte(s, pos) ~= 58 then fail(s, pos, "expected ':'") end
    local v
    v, pos = read_value(s, skip(s, pos + 1), depth + 1, max_depth)
    out[k] = v
    pos = skip(s, pos)
    local c = byte(s, pos)
    if c == 125 then return out, pos + 1 end
    if c ~= 44 then fail(s, pos, "expected ',' or '}'") end
    pos = skip(s, pos + 1)
  end
end

function read_value(s, pos, depth, max_depth)
  if depth > max_depth then fail(s, pos, "nested too deeply") end
  local c = byte(s, pos)
  if c == 123 then return read_object(s, pos, depth, max_depth) end
  if c == 91 then return read_array(s, pos, depth, max_depth) end
  if c == 34 then return read_string(s, pos) end
  if sub(s, pos, pos + 3) == "true" then return true, pos + 4 end
  if sub(s, pos, pos + 4) == "false" then return false, pos + 5 end
  if sub(s, pos, pos + 3) == "null" then return M.null, pos + 4 end
  local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
  if num and num ~= "" and num ~= "-" then
    local v = tonumber(num)
    if v and exact_integers and not (v < 2 ^ 53 and num:match("^%d+$")) then
      return setmetatable({ text = num }, M.Number), pos + #num
    end
    if v then return v, pos + #num end
  end
  fail(s, pos, c and ("unexpected character '" .. char(c) .. "'") or "unexpected end")
end

function M.decode(s, max_depth, opts)
  if type(s) ~= "string" then error("json.decode: expected a string", 2) end
  exact_integers = opts ~= nil and opts.exact_integers == true
  local v, pos = read_value(s, skip(s, 1), 1, max_depth or 64)
  pos = skip(s, pos)
  if pos <= #s then fail(s, pos, "trailing characters") end
  return v
end

---------------------------------------------------------------- encode
local function quote(str)
  return '"' .. str:gsub('[%c"\\]', function(c)
    local e = ({ ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r" })[c]
    return e or ("\\u%04x"):format(byte(c))
  end) .. '"'
end

local is_array = require("torch.serialization._lua_tables").is_list

local function encode(v, out, depth)
  if depth > 64 then error("json.encode: nested too deeply", 0) end
  local tv = type(v)
  if v == M.null then out[#out + 1] = "null"
  elseif tv == "boolean" then out[#out + 1] = tostring(v)
  elseif tv == "number" then
    if v ~= v or v == math.huge or v == -math.huge then error("json.encode: NaN and infinities have no JSON form", 0) end
    out[#out + 1] = (v == floor(v) and math.abs(v) < 2 ^ 53) and ("%d"):format(v) or ("%.17g"):format(v)
  elseif tv == "string" then out[#out + 1] = quote(v)
  elseif tv == "table" then
    if is_array(v) then
      out[#out + 1] = "["
      for i = 1, #v do
        if i > 1 then out[#out + 1] = "," end
        encode(v[i], out, depth + 1)
      end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in pairs(v) do
        if type(k) ~= "string" then error("json.encode: object keys must be strings, got " .. type(k), 0) end
        keys[#keys + 1] = k
      end
      table.sort(keys)
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = quote(k) .. ":"
        encode(v[k], out, depth + 1)
      end
      out[#out + 1] = "}"
    end
  else
    error("json.encode: cannot encode a " .. tv, 0)
  end
end

function M.encode(v)
  local out = {}
  encode(v, out, 1)
  return table.concat(out)
end

return M
