use super::*;

fn refused(text: &str) -> String {
    parse_action(text).expect_err(text)
}

#[test]
fn the_four_forms_parse_into_their_actions() {
    assert_eq!(parse_action("trace"), Ok(Action::Trace));
    assert_eq!(parse_action("continue"), Ok(Action::Continue));
    assert_eq!(
        parse_action("signal=SIGUSR1,pid=4242"),
        Ok(Action::Signal {
            signal: libc::SIGUSR1,
            pid: 4242
        })
    );
    assert_eq!(
        parse_action("exec=/usr/bin/logger,-t,rtsoak"),
        Ok(Action::Exec {
            argv: vec!["/usr/bin/logger".into(), "-t".into(), "rtsoak".into()]
        })
    );
}

#[test]
fn a_signal_is_a_number_a_name_with_or_without_sig_or_a_real_time_offset() {
    for (text, number) in [
        ("10", 10),
        ("SIGTERM", libc::SIGTERM),
        ("term", libc::SIGTERM),
        ("Usr2", libc::SIGUSR2),
        ("RTMIN", libc::SIGRTMIN()),
        ("SIGRTMIN+2", libc::SIGRTMIN() + 2),
        ("RTMAX-1", libc::SIGRTMAX() - 1),
    ] {
        assert_eq!(parse_signal(text), Ok(number), "{text}");
    }
    for text in ["0", "65", "-9", "SIGFOO", "RTMIN+99", "RTMAX-x", ""] {
        let error = parse_signal(text).expect_err(text);
        assert!(error.contains("is not a signal"), "{text}: {error}");
        assert!(error.contains("SIGUSR1"), "{error}");
    }
}

#[test]
fn pid_parent_is_this_process_s_parent() {
    let Ok(Action::Signal { pid, .. }) = parse_action("signal=HUP,pid=parent") else {
        panic!("pid=parent parses");
    };
    assert_eq!(pid, nix::unistd::getppid().as_raw());
}

#[test]
fn every_bad_signal_action_says_what_is_wrong_and_what_to_write() {
    for (text, says) in [
        ("signal", "needs a value"),
        ("signal=USR1", "add `,pid=PID`"),
        ("signal=USR1,pid=", "is not a process id"),
        ("signal=USR1,pid=12x", "is not a process id"),
        ("signal=USR1,pid=0", "never a process group"),
        ("signal=USR1,pid=-5", "never a process group"),
        ("signal=USR1,pid=1", "is init"),
        ("signal=USR1,process=12", "not `process=12`"),
        ("signal=USR1,pid=12,pid=13", "more than a signal and a pid"),
        ("signal=BOGUS,pid=12", "is not a signal"),
    ] {
        let error = refused(text);
        assert!(error.contains(says), "{text}: {error}");
    }
    let own = format!("signal=USR1,pid={}", std::process::id());
    assert!(refused(&own).contains("rtsoak itself"));
}

#[test]
fn every_bad_exec_action_says_what_is_wrong_and_what_to_write() {
    for (text, says) in [
        ("exec", "needs a value"),
        ("exec=", "empty argument (number 1)"),
        ("exec=/bin/true,", "empty argument (number 2)"),
        ("exec=/bin/echo,,x", "JSON array"),
        ("exec=[]", "names no program"),
        ("exec=[\"\"]", "its first word is empty"),
        ("exec=[/bin/true]", "not a JSON array of strings"),
        ("exec=[\"/bin/true\",1]", "not a JSON array of strings"),
        ("exec=[\"/bin/echo\",\"a\\u0000b\"]", "NUL byte"),
    ] {
        let error = refused(text);
        assert!(error.contains(says), "{text}: {error}");
    }
}

#[test]
fn the_json_form_passes_commas_and_empty_arguments_through() {
    assert_eq!(
        parse_action(r#"exec=["/usr/bin/printf","%s,%s\n","","b"]"#),
        Ok(Action::Exec {
            argv: vec![
                "/usr/bin/printf".into(),
                "%s,%s\n".into(),
                String::new(),
                "b".into()
            ]
        })
    );
}

#[test]
fn an_unknown_action_or_a_value_where_none_is_taken_lists_the_forms() {
    for text in ["stop", "Trace", "snapshot=1", ""] {
        let error = refused(text);
        assert!(error.contains("unknown action"), "{text}: {error}");
        assert!(error.contains("signal=NUM|NAME,pid=PID"), "{error}");
    }
    assert!(refused("trace=file.txt").contains("takes no value"));
    assert!(refused("continue=1").contains("takes no value"));
}
