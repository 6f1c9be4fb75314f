-- Neovim's own LSP client against `scanback lsp` (tests/lsp/nvim_check.sh runs this headless):
-- opens a file of a copy of examples/plant that holds an error, waits for its diagnostics, asks for
-- a definition, checks both, and exits non-zero on any mismatch. Works with Neovim 0.7 (Debian 12:
-- vim.lsp.start_client) and later (vim.lsp.start).
local scanback = os.getenv('SCANBACK_BINARY')
local root = os.getenv('PLANT_COPY')
local failures = 0

local function fail(text)
  io.stderr:write('nvim_check: ' .. text .. '\n')
  failures = failures + 1
end

local function finish()
  for _, client in pairs(vim.lsp.get_active_clients()) do client.stop() end
  vim.wait(2000, function() return #vim.lsp.get_active_clients() == 0 end, 20)
  if failures == 0 then io.stdout:write('nvim_check: ok\n') end
  os.exit(failures == 0 and 0 or 1)
end

vim.cmd('edit ' .. root .. '/programs.st')
local buf = vim.api.nvim_get_current_buf()
vim.bo[buf].filetype = 'st'

local config = {
  name = 'scanback',
  cmd = { scanback, 'lsp' },
  root_dir = root,
  workspace_folders = { { uri = vim.uri_from_fname(root), name = 'plant' } },
}
local client_id
if vim.lsp.start then
  client_id = vim.lsp.start(config)
else
  client_id = vim.lsp.start_client(config)
  vim.lsp.buf_attach_client(buf, client_id)
end
if not client_id then
  fail('the client did not start')
  finish()
end

-- Where the test put the error: the line after `hornLatch := FALSE` lost its ';'.
local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
local broken, broken_col, motor_line, motor_col
for i, line in ipairs(lines) do
  if not broken and line:find('hornLatch := FALSE$') then broken, broken_col = i, #line end
  local c = line:find('motor%.Reset')
  if c and not motor_line then motor_line, motor_col = i - 1, c - 1 + #'motor.' end
end
if not broken or not motor_line then
  fail('the copy of programs.st does not hold what the check looks for')
  finish()
end

-- Diagnostics: the server compiles the workspace and publishes; wait for them (not for a time).
local got = vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 20)
if not got then
  fail('no diagnostics for programs.st within 20 s')
else
  local diags = vim.diagnostic.get(buf)
  local d = diags[1]
  if #diags ~= 1 then fail('expected 1 diagnostic, got ' .. #diags) end
  if d.severity ~= vim.diagnostic.severity.ERROR then fail('the diagnostic is not an error') end
  -- The missing ';' is reported where it is missing: just after `FALSE` on the statement's own
  -- line (1-based `broken`), the column after it.
  if d.lnum ~= broken - 1 then fail(('the error is on line %d, expected %d'):format(d.lnum + 1, broken)) end
  if d.col ~= broken_col then fail(('the error is at column %d, expected %d'):format(d.col, broken_col)) end
  if not d.message:find("expected ';'") then fail('unexpected message: ' .. d.message) end
end

-- Go to definition of `Reset` in `motor.Reset()`: MotorCtl's method in fbs.st.
local params = {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  position = { line = motor_line, character = motor_col },
}
local responses = vim.lsp.buf_request_sync(buf, 'textDocument/definition', params, 10000)
local result
for _, r in pairs(responses or {}) do
  if r.error then fail('definition: ' .. vim.inspect(r.error)) end
  result = r.result
end
if not result then
  fail('no definition')
else
  local loc = result.uri and result or result[1]
  local fname = vim.uri_to_fname(loc.uri)
  if not fname:find('fbs%.st$') then fail('definition in ' .. fname .. ', expected fbs.st') end
  local fbs = vim.fn.readfile(root .. '/fbs.st')
  local in_motor = false
  local expected
  for i, line in ipairs(fbs) do
    if line:find('^FUNCTION_BLOCK MotorCtl') then in_motor = true end
    if in_motor and line:find('^METHOD Reset') then expected = i - 1 break end
  end
  if loc.range.start.line ~= expected then
    fail(('definition at line %d, expected %d'):format(loc.range.start.line + 1, (expected or -1) + 1))
  end
  -- Jump there, as gd would.
  vim.cmd('edit ' .. fname)
  vim.api.nvim_win_set_cursor(0, { loc.range.start.line + 1, loc.range.start.character })
  local word = vim.fn.expand('<cword>')
  if word ~= 'Reset' then fail('the cursor is on "' .. word .. '", expected Reset') end
end

finish()
