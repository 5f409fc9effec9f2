fn main() -> std::process::ExitCode {
    cmux_tray_cli::main()
}
