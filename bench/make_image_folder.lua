--[[
  bench/make_image_folder.lua — writes Fashion-MNIST test images as PNGs, one folder per class.

  Why: the data-pipeline benchmark (bench/data_pipeline.lua, .py) needs a real image folder
  that both ltorch and PyTorch decode; this makes it from the Debian dataset.
  Run: build/ltorch bench/make_image_folder.lua [dir=/tmp/ltorch_fmnist_png] [count=600]
  Idempotent: an existing folder with the right number of files is left alone.
]]
local torch = require "torch"
local data = torch.utils.data
local fmnist = require "torch.data.fashion_mnist_files"

local dir = arg[1] or "/tmp/ltorch_fmnist_png"
local count = tonumber(arg[2] or 600)

local p = io.popen("find " .. dir .. " -name '*.png' 2>/dev/null | wc -l")
local have = tonumber(p:read("*a"))
p:close()
if have == count then
  print(("%s: %d PNGs already there"):format(dir, count))
  return
end
os.execute("rm -rf '" .. dir .. "'")
local images, labels = fmnist.load("test")
for c = 0, 9 do os.execute(("mkdir -p '%s/%d'"):format(dir, c)) end
for i = 0, count - 1 do
  local y = labels[i]:item()
  data.image.write_png(("%s/%d/%05d.png"):format(dir, y, i), images:select(0, i))
end
print(("%s: wrote %d PNGs"):format(dir, count))
