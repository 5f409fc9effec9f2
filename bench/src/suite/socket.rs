//! A client of the daemon's local socket (docs/local-socket.md), one line out, one line back.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

pub struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    line: String,
}

impl Client {
    pub fn connect(path: &Path) -> anyhow::Result<Client> {
        let s = UnixStream::connect(path)?;
        Ok(Client { reader: BufReader::new(s.try_clone()?), writer: s, line: String::new() })
    }

    /// What `cmux-tray notify`, cmux's own `notify` and agents' hooks do: a connection for one
    /// request, its answer read, the connection closed.
    pub fn once(path: &Path, request: &str) -> anyhow::Result<String> {
        let mut client = Client::connect(path)?;
        Ok(client.ask(request)?.to_string())
    }

    /// Sends one request line and reads its one answer line.
    pub fn ask(&mut self, request: &str) -> anyhow::Result<&str> {
        self.writer.write_all(request.as_bytes())?;
        self.writer.write_all(b"\n")?;
        self.line.clear();
        self.reader.read_line(&mut self.line)?;
        anyhow::ensure!(!self.line.is_empty(), "the daemon closed the socket");
        Ok(self.line.trim_end())
    }

    /// Sends `requests` in one write (pipelined), then reads as many answers.
    pub fn pipeline(&mut self, requests: &[String]) -> anyhow::Result<usize> {
        let mut all = String::new();
        for r in requests {
            all.push_str(r);
            all.push('\n');
        }
        self.writer.write_all(all.as_bytes())?;
        let mut ok = 0;
        for _ in requests {
            self.line.clear();
            self.reader.read_line(&mut self.line)?;
            ok += usize::from(!self.line.contains("ERROR") && !self.line.contains("\"error\""));
        }
        Ok(ok)
    }

    /// `cloud.follow` (v2).
    pub fn follow(&mut self, kind: &str, id: &str) -> anyhow::Result<()> {
        let answer = self.ask(&serde_json::json!({"id": 1, "method": "cloud.follow", "params": {"kind": kind, "id": id}}).to_string())?;
        anyhow::ensure!(answer.contains("\"following\":true"), "cloud.follow {id}: {answer}");
        Ok(())
    }
}
