--[[
  torch.cli.inspect — `ltorch inspect CHECKPOINT`: prints what a checkpoint holds: every tensor's
  key, shape and dtype, the total element count, and the plain values (numbers, strings,
  booleans). Loads through torch.load, so hostile files are refused the same way and no code
  runs. The runtime runs this file when the script argument is the bare word "inspect" and no
  file of that name exists; tools/inspect.lua runs it from the source tree.

  Use: ltorch inspect CHECKPOINT(.pt | .safetensors)
]]
local torch = require "torch"

local path = arg[1]
if not path then
  io.stderr:write("usage: ltorch inspect CHECKPOINT\n")
  os.exit(2)
end

local ok, value = pcall(torch.load, path)
if not ok then
  io.stderr:write(tostring(value), "\n")
  os.exit(1)
end

local tensors, plain, total = {}, {}, 0

local function walk(v, key)
  if torch.is_tensor(v) then
    tensors[#tensors + 1] = { key, "[" .. table.concat(v:size(), ", ") .. "]", tostring(v.dtype) }
    total = total + v:numel()
  elseif type(v) == "table" and v ~= torch.serialization.None then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do walk(v[k], key == "" and tostring(k) or (key .. "." .. tostring(k))) end
  else
    plain[#plain + 1] = { key, v == torch.serialization.None and "None" or (type(v) == "string" and ("%q"):format(v) or tostring(v)) }
  end
end
walk(value, "")

local width = 0
for _, t in ipairs(tensors) do width = math.max(width, #t[1]) end
print(("%s: %d tensors, %d elements"):format(path, #tensors, total))
for _, t in ipairs(tensors) do print(("  %-" .. width .. "s  %-16s %s"):format(t[1], t[2], t[3])) end
if #plain > 0 then
  print("values:")
  for _, p in ipairs(plain) do print(("  %s = %s"):format(p[1], p[2])) end
end
