"""Which OTRF Security-Datasets recordings the org pack uses, and what each must establish.

Each entry: (folder, tactic, ATT&CK ids, needles). A needle is a value the recording's rows
hold (after mapping) that a right investigation finds; the builder keeps those it finds.
"""

# ruff: noqa: E501

C, D, DI, E, L, P, PE, CO = ("credential_access", "defense_evasion", "discovery", "execution",
                             "lateral_movement", "persistence", "privilege_escalation", "collection")
BASE = "datasets/atomic/windows/{tactic}/host/{name}.zip"

DATASETS: list[tuple[str, str, list[str], list[str]]] = [
    ("psh_lsass_memory_dump_comsvcs", C, ["T1003.001"], ["comsvcs.dll", "lsass-comsvcs.dmp"]),
    ("cmd_lsass_memory_dumpert_syscalls", C, ["T1003.001"], ["Outflank-Dumpert.exe", "dumpert.dmp"]),
    ("rdp_interactive_taskmanager_lsass_dump", C, ["T1003.001"], ["lsass.DMP", "taskmgr.exe"]),
    ("cmd_sam_copy_esentutl", C, ["T1003.002"], ["esentutl.exe", "C:\\ProgramData\\SAM"]),
    ("empire_shell_reg_dump_sam", C, ["T1003.002"], ["reg.exe", "HKLM\\SAM"]),
    ("cmd_dumping_ntds_dit_file_ntdsutil", C, ["T1003.003"], ["ntdsutil.exe", "ntds.dit"]),
    ("cmd_dumping_ntds_dit_file_volume_shadow_copy", C, ["T1003.003"], ["vssadmin.exe", "ntds.dit"]),
    ("psh_input_capture_promptforcreds", C, ["T1056.002"], ["PromptForCredential", "powershell.exe"]),
    ("cmd_psexec_lsa_secrets_dump", C, ["T1003.004"], ["PsExec", "HKLM\\security"]),
    ("empire_shell_rubeus_asktgt_ptt", C, ["T1550.003"], ["asktgt", "/ptt"]),
    ("empire_mimikatz_logonpasswords", C, ["T1003.001"], ["lsass.exe", "0x1010"]),
    ("cmd_bitsadmin_download_psh_script", D, ["T1197"], ["bitsadmin.exe", "/transfer"]),
    ("cmd_mshta_vbscript_execute_psh", D, ["T1218.005"], ["mshta.exe", "vbscript"]),
    ("cmd_mshta_javascript_getobject_sct", D, ["T1218.005"], ["mshta.exe", "GetObject"]),
    ("cmd_netsh_fw_mod_open_ports", D, ["T1562.004"], ["netsh", "localport=450"]),
    ("psh_cmstp_execution_bypassuac", D, ["T1218.003"], ["cmstp.exe", ".inf"]),
    ("psh_mavinject_dll_notepad", D, ["T1218.013"], ["mavinject.exe", "/INJECTRUNNING"]),
    ("psh_hh_local_html_payload", D, ["T1218.001"], ["hh.exe", ".chm"]),
    ("psh_control_panel_execution", D, ["T1218.002"], ["control.exe", ".cpl"]),
    ("empire_launcher_sct_regsvr32", D, ["T1218.010"], ["regsvr32.exe", "scrobj.dll"]),
    ("covenant_installutil", D, ["T1218.004"], ["InstallUtil.exe"]),
    ("wmic_remote_xsl_jscript", D, ["T1220"], ["wmic.exe", ".xsl"]),
    ("auditpol_system_user_auditpolicy_modification", D, ["T1562.002"], ["auditpol.exe", "/remove"]),
    ("reg_cmd_process_commandline_logging_disabled", D, ["T1562.001", "T1112"], ["ProcessCreationIncludeCmdLine_Enabled", "reg.exe"]),
    ("cmd_disable_eventlog_service_startuptype_modification_via_registry", D, ["T1562.002", "T1112"], ["Services\\EventLog\\Start", "reg.exe"]),
    ("covenant_lolbin_wuauclt_createremotethread", D, ["T1218", "T1055"], ["wuauclt.exe", "/UpdateDeploymentProvider"]),
    ("cmd_userinitmprlogonscript_batch", P, ["T1037.001"], ["UserInitMprLogonScript", "reg.exe"]),
    ("empire_persistence_registry_modification_run_keys_elevated_user", P, ["T1547.001"], ["CurrentVersion\\Run"]),
    ("empire_schtasks_creation_standard_user", P, ["T1053.005"], ["schtasks.exe", "/create"]),
    ("cmd_service_mod_fax", PE, ["T1543.003"], ["sc.exe", "Fax"]),
    ("empire_uac_shellapi_fodhelper", PE, ["T1548.002"], ["fodhelper.exe", "ms-settings"]),
    ("cmd_seatbelt_group_user", DI, ["T1069.001", "T1087.001"], ["Seatbelt"]),
    ("empire_shell_net_local_users", DI, ["T1087.001"], ["net.exe", "net1.exe"]),
    ("empire_shell_net_localgroup_administrators", DI, ["T1069.001"], ["localgroup", "administrators"]),
    ("empire_shell_samr_EnumDomainUsers", DI, ["T1087.002"], ["user /domain", "net1"]),
    ("psh_python_webserver", E, ["T1059.006"], ["python.exe", "http.server"]),
    ("empire_launcher_vbs", E, ["T1059.005"], ["wscript.exe", ".vbs"]),
    ("empire_psexec_dcerpc_tcp_svcctl", L, ["T1021.002", "T1569.002"], ["Updater", "-noP -sta -w 1"]),
    ("empire_smbexec_dcerpc_smb_svcctl", L, ["T1021.002", "T1569.002"], ["PGUJLOAKFQFVOMHGFQPX"]),
    ("empire_wmi_dcerpc_wmi_IWbemServices_ExecMethod", L, ["T1047"], ["WmiPrvSE.exe", "powershell.exe"]),
    ("covenant_psremoting_command", L, ["T1021.006"], ["wsmprovhost.exe"]),
    ("empire_psremoting_stager", L, ["T1021.006"], ["wsmprovhost.exe", "5985"]),
    ("covenant_dcom_registerxll", L, ["T1021.003"], ["excel.exe", ".xll"]),
    ("covenant_sharpsc_create_dcerpc_smb_svcctl", L, ["T1021.002", "T1543.003"], ["AgentUpd"]),
    ("covenant_copy_smb_CreateRequest", L, ["T1021.002", "T1570"], ["5145", "C$"]),
    ("covenant_sharpwmi_create_dcerpc_wmi", L, ["T1047"], ["WmiPrvSE.exe"]),
    ("schtask_create", L, ["T1053.005"], ["4698", "schtasks"]),
    ("msf_record_mic", CO, ["T1123"], ["SoundRecorder"]),
]
