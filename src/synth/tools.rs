//! The tool calls the synthetic agent makes (Bash, Read, Edit, Write, Grep, Glob):
//! each one's input and result, sized like real ones.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tool {
    Bash,
    Read,
    Edit,
    Write,
    Grep,
    Glob,
}

impl Tool {
    pub(super) fn name(self) -> &'static str {
        match self {
            Tool::Bash => "Bash",
            Tool::Read => "Read",
            Tool::Edit => "Edit",
            Tool::Write => "Write",
            Tool::Grep => "Grep",
            Tool::Glob => "Glob",
        }
    }
}

/// One tool call and its result, rendered as JSON fragments.
pub(super) struct ToolCall {
    pub(super) id: String,
    pub(super) tool: Tool,
    /// The `input` object.
    pub(super) input: Vec<u8>,
    /// The `content` value of the tool_result block (a string or a block array).
    pub(super) content: Vec<u8>,
    pub(super) is_error: bool,
    /// The `toolUseResult` value (structured result, or an error string).
    pub(super) tool_use_result: Vec<u8>,
    /// Estimated tokens the result adds to the context.
    pub(super) result_tokens: u64,
}

impl Gen {
    pub(super) fn tool_call(&mut self) -> ToolCall {
        let tool = match self.rng.below(100) {
            0..32 => Tool::Read,
            32..60 => Tool::Bash,
            60..76 => Tool::Edit,
            76..86 => Tool::Grep,
            86..93 => Tool::Glob,
            _ => Tool::Write,
        };
        let id = format!("toolu_01{}", base62(&mut self.rng, 22));
        let mut call = ToolCall {
            id,
            tool,
            input: Vec::new(),
            content: Vec::new(),
            is_error: false,
            tool_use_result: Vec::new(),
            result_tokens: 0,
        };
        match tool {
            Tool::Bash => self.bash(&mut call),
            Tool::Read => self.read(&mut call),
            Tool::Edit => self.edit(&mut call),
            Tool::Write => self.write(&mut call),
            Tool::Grep => self.grep(&mut call),
            Tool::Glob => self.glob(&mut call),
        }
        call
    }

    pub(super) fn bash(&mut self, c: &mut ToolCall) {
        let mut cmd = String::new();
        text::command(&mut self.rng, &mut cmd);
        let mut desc = String::new();
        text::prose(&mut self.rng, &mut desc, 20);
        let desc = desc.split(['.', ':', '?']).next().unwrap_or_default().trim().to_string();
        c.input.extend_from_slice(b"{\"command\":");
        json_str(&mut c.input, &cmd);
        c.input.extend_from_slice(b",\"description\":");
        json_str(&mut c.input, &desc);
        if self.rng.chance(0.1) {
            c.input.extend_from_slice(b",\"timeout\":120000");
        }
        c.input.push(b'}');

        let n = self.sized(1_000.0, 1.3, 20, 30_000);
        let mut out = String::new();
        match self.rng.below(4) {
            0 => text::diff(&mut self.rng, &mut out, n),
            1 => text::shell_listing(&mut self.rng, &mut out, n),
            _ => text::log(&mut self.rng, &mut out, n),
        }
        let out = out.trim_end();
        if self.rng.chance(0.08) {
            let err = format!("Exit code 1\n{out}\nerror: test failed, to rerun pass `--lib`");
            json_str(&mut c.content, &err);
            c.is_error = true;
            json_str(&mut c.tool_use_result, &format!("Error: {err}"));
            c.result_tokens = tokens_of(err.len());
        } else {
            json_str(&mut c.content, out);
            c.tool_use_result.extend_from_slice(b"{\"stdout\":");
            json_str(&mut c.tool_use_result, out);
            c.tool_use_result.extend_from_slice(
                b",\"stderr\":\"\",\"interrupted\":false,\"isImage\":false,\"noOutputExpected\":false}",
            );
            c.result_tokens = tokens_of(out.len());
        }
    }

    pub(super) fn read(&mut self, c: &mut ToolCall) {
        if self.rng.chance(0.03) {
            // A screenshot: the result is an image block.
            let path = format!("{}/docs/screenshot-{}.png", self.cwd, self.rng.below(100));
            c.input.extend_from_slice(b"{\"file_path\":");
            json_str(&mut c.input, &path);
            c.input.push(b'}');
            let n = self.rng.size(6_000.0, 0.6, 1_500, 40_000);
            let data = base64_random(&mut self.rng, n, "iVBORw0KGgoAAAANSUhEUgAA");
            c.content.extend_from_slice(
                b"[{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":",
            );
            json_str(&mut c.content, &data);
            c.content.extend_from_slice(b"}}]");
            let _ = write!(
                Sink(&mut c.tool_use_result),
                "{{\"type\":\"image\",\"file\":{{\"type\":\"image/png\",\"originalSize\":{}}}}}",
                n * 3 / 4
            );
            c.result_tokens = self.rng.range(800, 1_600);
            self.stats.images += 1;
            return;
        }
        let path = self.file_path();
        c.input.extend_from_slice(b"{\"file_path\":");
        json_str(&mut c.input, &path);
        let partial = self.rng.chance(0.15);
        let first = if partial { self.rng.range(1, 400) as usize } else { 1 };
        if partial {
            let _ = write!(Sink(&mut c.input), ",\"offset\":{first},\"limit\":200");
        }
        c.input.push(b'}');
        if self.rng.chance(0.02) {
            let err = "<tool_use_error>File does not exist.</tool_use_error>";
            json_str(&mut c.content, err);
            c.is_error = true;
            json_str(&mut c.tool_use_result, "Error: File does not exist.");
            c.result_tokens = tokens_of(err.len());
            return;
        }
        let n = self.sized(3_000.0, 0.9, 200, 60_000);
        let mut src = String::new();
        text::code(&mut self.rng, &mut src, n, 0);
        let mut listing = String::with_capacity(src.len() + src.len() / 4);
        text::numbered(&src, first, &mut listing);
        json_str(&mut c.content, &listing);
        let lines = src.lines().count();
        c.tool_use_result.extend_from_slice(b"{\"type\":\"text\",\"file\":{\"filePath\":");
        json_str(&mut c.tool_use_result, &path);
        c.tool_use_result.extend_from_slice(b",\"content\":");
        json_str(&mut c.tool_use_result, &src);
        let _ = write!(
            Sink(&mut c.tool_use_result),
            ",\"numLines\":{lines},\"startLine\":{first},\"totalLines\":{}}}}}",
            first + lines + self.rng.below(300) as usize
        );
        c.result_tokens = tokens_of(listing.len());
    }

    pub(super) fn edit(&mut self, c: &mut ToolCall) {
        let path = self.file_path();
        let mut old = String::new();
        let n = self.rng.size(300.0, 0.8, 20, 4_000);
        text::code(&mut self.rng, &mut old, n, 1);
        let mut new = String::new();
        let n = self.rng.size(400.0, 0.8, 20, 5_000);
        text::code(&mut self.rng, &mut new, n, 1);
        let (old, new) = (old.trim_end(), new.trim_end());
        c.input.extend_from_slice(b"{\"file_path\":");
        json_str(&mut c.input, &path);
        c.input.extend_from_slice(b",\"old_string\":");
        json_str(&mut c.input, old);
        c.input.extend_from_slice(b",\"new_string\":");
        json_str(&mut c.input, new);
        c.input.push(b'}');
        if self.rng.chance(0.05) {
            let err = format!(
                "<tool_use_error>String to replace not found in file.\nString: {}</tool_use_error>",
                old.lines().next().unwrap_or_default()
            );
            json_str(&mut c.content, &err);
            c.is_error = true;
            json_str(&mut c.tool_use_result, "Error: String to replace not found in file.");
            c.result_tokens = tokens_of(err.len());
            return;
        }
        let at = self.rng.range(1, 900) as usize;
        let mut snippet = String::new();
        let n = self.sized(500.0, 0.6, 100, 6_000);
        text::code(&mut self.rng, &mut snippet, n, 0);
        let mut msg = format!(
            "The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n"
        );
        text::numbered(&snippet, at, &mut msg);
        json_str(&mut c.content, &msg);
        c.tool_use_result.extend_from_slice(b"{\"filePath\":");
        json_str(&mut c.tool_use_result, &path);
        c.tool_use_result.extend_from_slice(b",\"oldString\":");
        json_str(&mut c.tool_use_result, old);
        c.tool_use_result.extend_from_slice(b",\"newString\":");
        json_str(&mut c.tool_use_result, new);
        let (ol, nl) = (old.lines().count(), new.lines().count());
        let _ = write!(
            Sink(&mut c.tool_use_result),
            ",\"structuredPatch\":[{{\"oldStart\":{at},\"oldLines\":{ol},\"newStart\":{at},\"newLines\":{nl},\"lines\":["
        );
        let patch = old.lines().map(|l| ('-', l)).chain(new.lines().map(|l| ('+', l)));
        for (i, (sign, l)) in patch.enumerate() {
            if i > 0 {
                c.tool_use_result.push(b',');
            }
            json_str(&mut c.tool_use_result, &format!("{sign}{l}"));
        }
        c.tool_use_result.extend_from_slice(b"]}],\"userModified\":false,\"replaceAll\":false}");
        c.result_tokens = tokens_of(msg.len());
    }

    pub(super) fn write(&mut self, c: &mut ToolCall) {
        let path = self.file_path();
        let mut body = String::new();
        let n = self.sized(2_500.0, 0.9, 200, 40_000);
        text::code(&mut self.rng, &mut body, n, 0);
        c.input.extend_from_slice(b"{\"file_path\":");
        json_str(&mut c.input, &path);
        c.input.extend_from_slice(b",\"content\":");
        json_str(&mut c.input, &body);
        c.input.push(b'}');
        let msg = format!("File created successfully at: {path}");
        json_str(&mut c.content, &msg);
        c.tool_use_result.extend_from_slice(b"{\"type\":\"create\",\"filePath\":");
        json_str(&mut c.tool_use_result, &path);
        c.tool_use_result.extend_from_slice(b",\"content\":");
        json_str(&mut c.tool_use_result, &body);
        c.tool_use_result.extend_from_slice(b",\"structuredPatch\":[]}");
        c.result_tokens = tokens_of(msg.len());
    }

    pub(super) fn grep(&mut self, c: &mut ToolCall) {
        let mut pat = String::new();
        text::pattern(&mut self.rng, &mut pat);
        let content_mode = self.rng.chance(0.5);
        c.input.extend_from_slice(b"{\"pattern\":");
        json_str(&mut c.input, &pat);
        c.input.extend_from_slice(b",\"path\":");
        json_str(&mut c.input, &self.cwd);
        if content_mode {
            c.input.extend_from_slice(b",\"output_mode\":\"content\",\"-n\":true}");
        } else {
            c.input.extend_from_slice(b",\"output_mode\":\"files_with_matches\"}");
        }
        let n = self.sized(800.0, 1.1, 30, 20_000);
        if content_mode {
            let mut hits = String::new();
            text::grep_hits(&mut self.rng, &mut hits, n);
            let hits = hits.trim_end();
            json_str(&mut c.content, hits);
            c.tool_use_result.extend_from_slice(b"{\"mode\":\"content\",\"numFiles\":0,\"filenames\":[],\"content\":");
            json_str(&mut c.tool_use_result, hits);
            let _ = write!(Sink(&mut c.tool_use_result), ",\"numLines\":{}}}", hits.lines().count());
            c.result_tokens = tokens_of(hits.len());
        } else {
            let mut files = String::new();
            text::file_list(&mut self.rng, &mut files, &self.cwd, n);
            let names: Vec<&str> = files.lines().collect();
            let shown = format!("Found {} files\n{}", names.len(), files.trim_end());
            json_str(&mut c.content, &shown);
            c.tool_use_result.extend_from_slice(b"{\"mode\":\"files_with_matches\",\"filenames\":");
            json_str_array(&mut c.tool_use_result, &names);
            let _ = write!(Sink(&mut c.tool_use_result), ",\"numFiles\":{}}}", names.len());
            c.result_tokens = tokens_of(shown.len());
        }
    }

    pub(super) fn glob(&mut self, c: &mut ToolCall) {
        let ext = *self.rng.pick(&["rs", "ts", "tsx", "py", "md"]);
        c.input.extend_from_slice(b"{\"pattern\":");
        json_str(&mut c.input, &format!("**/*.{ext}"));
        c.input.push(b'}');
        let n = self.sized(500.0, 0.9, 40, 10_000);
        let mut files = String::new();
        text::file_list(&mut self.rng, &mut files, &self.cwd, n);
        let files = files.trim_end();
        json_str(&mut c.content, files);
        let names: Vec<&str> = files.lines().collect();
        c.tool_use_result.extend_from_slice(b"{\"filenames\":");
        json_str_array(&mut c.tool_use_result, &names);
        let _ = write!(
            Sink(&mut c.tool_use_result),
            ",\"durationMs\":{},\"numFiles\":{},\"truncated\":false}}",
            self.rng.range(2, 300),
            names.len()
        );
        c.result_tokens = tokens_of(files.len());
    }
}
