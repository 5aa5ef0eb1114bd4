--[[
  torch.tools._input — reading the tools' input files: JSON (torch.serialization.json) or CSV with
  a header row (comma or tab separated; no quoted commas). Errors are usage errors naming the file.
]]
local T = require "torch.tools"

local M = {}

function M.read(path)
  if type(path) ~= "string" then T.usage_error("an input file is required") end
  local f, why = io.open(path, "rb")
  if not f then T.usage_error("cannot read %s", tostring(why)) end
  local s = f:read("*a")
  f:close()
  return s
end

-- -> array of rows (tables keyed by the header's names), header
function M.csv(text, path)
  local lines = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    line = line:gsub("\r$", "")
    if line:match("%S") and not line:match("^#") then lines[#lines + 1] = line end
  end
  if #lines < 1 then T.usage_error("%s: empty CSV", path) end
  local sep = lines[1]:find("\t") and "\t" or ","
  local function split(line)
    local out = {}
    for field in (line .. sep):gmatch("([^" .. sep .. "]*)" .. sep) do out[#out + 1] = field:match("^%s*(.-)%s*$") end
    return out
  end
  local header = split(lines[1])
  local rows = {}
  for i = 2, #lines do
    local fields = split(lines[i])
    if #fields ~= #header then
      T.usage_error("%s: line %d has %d fields, the header has %d", path, i, #fields, #header)
    end
    local row = {}
    for j, h in ipairs(header) do row[h] = fields[j] end
    rows[#rows + 1] = row
  end
  return rows, header
end

-- JSON or CSV by the first non-blank character: -> "json", value | "csv", {rows, header}
function M.load(path)
  local text = M.read(path)
  local first = text:match("^%s*(.)")
  if first == "{" or first == "[" then
    local ok, v = pcall(require("torch.serialization.json").decode, text)
    if not ok then T.usage_error("%s: %s", path, tostring(v)) end
    return "json", v
  end
  local rows, header = M.csv(text, path)
  return "csv", { rows, header }
end

return M
