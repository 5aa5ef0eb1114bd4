--[[
  predict.lua — classify texts with a checkpoint written by train.lua.
      ltorch predict.lua "Der Hund schläft." "The dog sleeps."    (or one text per line on stdin)
      ltorch predict.lua --checkpoint runs/model/checkpoints/checkpoint-00000001.pt "..."
  Rebuilds the model and the tokenizer from the checkpoint's config (its vocabulary and class
  names), so it does not read the training data. Prints each text's top class and probability.
]]
local torch = require "torch"
local model_mod = require "model"
local data = require "data"

local function fail(msg)
  io.stderr:write("predict.lua: " .. msg .. "\nusage: ltorch predict.lua [--checkpoint FILE] TEXT ...\n")
  os.exit(2)
end

local function main()
  local argv, path, texts = arg or {}, nil, {}
  local i = 1
  while argv[i] do
    if argv[i] == "--checkpoint" then path, i = argv[i + 1] or fail("--checkpoint needs a value"), i + 2
    else texts[#texts + 1], i = argv[i], i + 1 end
  end
  if #texts == 0 then for line in io.lines() do texts[#texts + 1] = line end end
  path = path or torch.training_state.Manager(dofile("config.lua").out .. "/checkpoints"):best()
  if not path or not io.open(path, "rb") then fail("no checkpoint (run ltorch train.lua first): " .. tostring(path)) end
  local st = torch.load(path, { map_location = "cpu" })   -- a checkpoint from a GPU run reads here too
  local config = st.config
  local tok = data.tokenizer(config, nil, config.vocab)
  local model = model_mod.new(config, #config.vocab, #config.classes)
  model:load_state_dict(st.model)
  model:eval()
  local ids, mask = tok:batch(texts, { max_len = config.max_len })
  local probs = torch.inference_mode(function() return model(ids, mask):softmax(1) end)
  local p, k = probs:max(1)
  p, k = p:tolist(), k:tolist()
  for j, t in ipairs(texts) do
    print(("%-4s %.3f  %s"):format(config.classes[k[j] + 1], p[j], t:sub(1, 60):gsub("\n", " ")))
  end
end

main()
