--[[
  evaluate.lua — load a checkpoint written by train.lua and report on the test set: accuracy,
  per-class precision / recall / F1 and the confusion matrix (rows: true class).
      ltorch evaluate.lua [CHECKPOINT]      (default: the best one under config.lua's out)
]]
local torch = require "torch"
local model_mod = require "model"
local data = require "data"

local function main()
  local path = arg and arg[1]
  if not path then
    local defaults = dofile("config.lua")
    path = torch.training_state.Manager(defaults.out .. "/checkpoints"):best()
    if not path then io.stderr:write("evaluate.lua: no checkpoint yet; run ltorch train.lua first\n"); os.exit(2) end
  end
  if not io.open(path, "rb") then io.stderr:write("evaluate.lua: no such file: " .. path .. "\n"); os.exit(2) end
  local st = torch.load(path, { map_location = "cpu" })   -- a checkpoint from a GPU run reads here too
  local config = st.config
  local model = model_mod.new(config)
  model:load_state_dict(st.model)
  model:eval()
  local _, _, test = data.loaders(config, config.stats)
  local k = #data.classes
  local conf = torch.zeros(k, k, { dtype = torch.int64 })
  torch.inference_mode(function()
    for batch in test:iter() do
      local pred = model(batch[1]):argmax(1)
      conf:add_(torch.bincount(batch[2] * k + pred, { minlength = k * k }):view(k, k))
    end
  end)
  local c = conf:tolist()
  local correct, total = 0, 0
  print(("%-12s %9s %9s %9s %9s"):format("class", "precision", "recall", "f1", "support"))
  for i = 1, k do
    local tp, row, col = c[i][i], 0, 0
    for j = 1, k do row, col = row + c[i][j], col + c[j][i] end
    local p, r = col > 0 and tp / col or 0, row > 0 and tp / row or 0
    print(("%-12s %9.4f %9.4f %9.4f %9d"):format(data.classes[i], p, r, p + r > 0 and 2 * p * r / (p + r) or 0, row))
    correct, total = correct + tp, total + row
  end
  print(("test accuracy %.2f %% on %d images"):format(100 * correct / total, total))
  print("confusion matrix (rows: true class, columns: predicted)")
  for i = 1, k do
    local cells = {}
    for j = 1, k do cells[j] = ("%5d"):format(c[i][j]) end
    print(table.concat(cells))
  end
end

main()
